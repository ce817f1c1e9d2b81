defmodule WellBehaved.External.Slots do
  @moduledoc false
  # The slots of a WellBehaved.External.Pool as its manager sees them
  # (functions on the manager's state), shared by Pool and Servers: which
  # server a slot connects to, a server's slots, closing a slot's socket.
  # Slot `s` (1-based) connects to server `rem(s - 1, servers)`.

  # a slot's value in the atomics (Pool and Client use the same)
  @idle 0
  @down -1

  @doc false
  def server_of(state, slot), do: rem(slot - 1, map_size(state.servers))

  @doc false
  def slots_of(state, index) do
    n = map_size(state.servers)
    Enum.filter(1..state.slots, &(rem(&1 - 1, n) == index))
  end

  @doc false
  def close_slot(state, slot) do
    case :ets.lookup(state.name, slot) do
      [{^slot, sock, _}] -> :gen_tcp.close(sock)
      [] -> :ok
    end
  end

  @doc false
  # server `index` is gone: its idle slots go down, their sockets closed
  # (slots in use are discarded by their callers, who see them closed)
  def down_idle(state, index) do
    for slot <- slots_of(state, index),
        :atomics.compare_exchange(state.atomics, slot, @idle, @down) == :ok,
        do: close_slot(state, slot)

    :ok
  end
end
