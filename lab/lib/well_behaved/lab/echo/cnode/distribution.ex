defmodule WellBehaved.Lab.Echo.CNode.Distribution do
  @moduledoc """
  Erlang distribution and epmd for the `:cnode` echo method
  (`WellBehaved.Lab.Echo.CNode`): `ensure/0` starts them when this VM is
  not distributed; `release/1` stops what it started, removes the cookie
  file starting distribution created, and leaves epmd running while
  another node is registered in it.
  """

  @owned_key {__MODULE__, :owned}
  @loopback {127, 0, 0, 1}

  @typedoc "What `ensure/0` started, for `release/1` to stop."
  @type owned :: %{
          distribution: boolean(),
          interface: boolean(),
          epmd: boolean(),
          cookie_file: {Path.t(), String.t()} | nil
        }

  @doc """
  What an earlier `ensure/0` started and nothing released yet (its caller
  was killed, say), or `nil`.
  """
  @spec leftover() :: owned() | nil
  def leftover, do: :persistent_term.get(@owned_key, nil)

  @doc """
  Makes this VM distributed if it is not: starts epmd when none answers on
  127.0.0.1, then distribution (a long name on 127.0.0.1, listening on
  loopback only, a random cookie). Returns what it started, to hand to
  `release/1`; when the VM is distributed already, what an earlier call
  started and nothing released, or `nil`.
  """
  @spec ensure() :: {:ok, owned() | nil} | {:error, term()}
  def ensure do
    if Node.alive?() do
      # ours if a previous server started it and could not clean up
      {:ok, :persistent_term.get(@owned_key, nil)}
    else
      with {:ok, started_epmd?} <- ensure_epmd() do
        start_distribution(started_epmd?)
      end
    end
  end

  defp start_distribution(started_epmd?) do
    cookie_file = cookie_file()
    cookie_file_existed? = cookie_file != nil and File.exists?(cookie_file)
    set_interface? = Application.get_env(:kernel, :inet_dist_use_interface) == nil
    if set_interface?, do: Application.put_env(:kernel, :inet_dist_use_interface, @loopback)
    name = :"wb_echo_#{System.pid()}_#{System.unique_integer([:positive])}@127.0.0.1"

    case Node.start(name, :longnames) do
      {:ok, _} ->
        # Node.start/2 reads (or creates) ~/.erlang.cookie: note if it created it
        created_cookie =
          if cookie_file != nil and not cookie_file_existed? and File.exists?(cookie_file),
            do: {cookie_file, Atom.to_string(Node.get_cookie())}

        Node.set_cookie(random_cookie())

        owned = %{
          distribution: true,
          interface: set_interface?,
          epmd: started_epmd?,
          cookie_file: created_cookie
        }

        :persistent_term.put(@owned_key, owned)
        {:ok, owned}

      {:error, reason} ->
        release(%{
          distribution: false,
          interface: set_interface?,
          epmd: started_epmd?,
          cookie_file: nil
        })

        {:error, {:distribution_not_started, reason}}
    end
  end

  defp random_cookie do
    :crypto.strong_rand_bytes(24) |> Base.url_encode64(padding: false) |> String.to_atom()
  end

  defp cookie_file do
    case :init.get_argument(:home) do
      {:ok, [[home | _] | _]} -> Path.join(List.to_string(home), ".erlang.cookie")
      _ -> nil
    end
  end

  # {:ok, true} when this call started epmd
  defp ensure_epmd do
    case :erl_epmd.names(@loopback) do
      {:ok, _} ->
        {:ok, false}

      {:error, _} ->
        case System.cmd(epmd(), ["-daemon"], stderr_to_stdout: true) do
          {_, 0} ->
            if await_epmd(true, 5_000), do: {:ok, true}, else: {:error, :epmd_not_started}

          {output, status} ->
            {:error, {:epmd_not_started, status, output}}
        end
    end
  end

  defp epmd do
    erts = Path.join([:code.root_dir(), "erts-#{:erlang.system_info(:version)}", "bin", "epmd"])
    if File.exists?(erts), do: erts, else: System.find_executable("epmd") || "epmd"
  end

  # waits until epmd answers (up? true) or stops answering (up? false)
  defp await_epmd(up?, timeout) do
    deadline = System.monotonic_time(:millisecond) + timeout
    await_epmd_until(up?, deadline)
  end

  defp await_epmd_until(up?, deadline) do
    cond do
      match?({:ok, _}, :erl_epmd.names(@loopback)) == up? ->
        true

      System.monotonic_time(:millisecond) >= deadline ->
        false

      true ->
        Process.sleep(10)
        await_epmd_until(up?, deadline)
    end
  end

  @doc """
  Stops what `ensure/0` started: distribution, the cookie file starting it
  created, and epmd (only when no other node is registered in it).
  """
  @spec release(owned() | nil) :: :ok
  def release(nil), do: :ok

  def release(owned) do
    name = node()

    if owned.distribution and Node.alive?() do
      Node.stop()
    end

    if owned.interface, do: Application.delete_env(:kernel, :inet_dist_use_interface)

    case owned.cookie_file do
      {path, cookie} ->
        if match?({:ok, ^cookie}, File.read(path) |> trim_ok()), do: File.rm(path)

      nil ->
        :ok
    end

    if owned.epmd, do: stop_epmd(name)
    :persistent_term.erase(@owned_key)
    :ok
  end

  defp trim_ok({:ok, text}), do: {:ok, String.trim(text)}
  defp trim_ok(error), do: error

  # Kills the epmd this module started once our node has left it, unless
  # another node is registered (epmd itself refuses then, too).
  defp stop_epmd(our_node) do
    [alive | _] = our_node |> Atom.to_string() |> String.split("@")
    deadline = System.monotonic_time(:millisecond) + 5_000

    case await_unregistered(String.to_charlist(alive), deadline) do
      {:ok, []} ->
        System.cmd(epmd(), ["-kill"], stderr_to_stdout: true)
        await_epmd(false, 5_000)

      _ ->
        :ok
    end
  end

  defp retry_unregistered(alive, deadline) do
    Process.sleep(10)
    await_unregistered(alive, deadline)
  end

  defp await_unregistered(alive, deadline) do
    case :erl_epmd.names(@loopback) do
      {:ok, names} = result ->
        cond do
          not List.keymember?(names, alive, 0) -> result
          System.monotonic_time(:millisecond) >= deadline -> result
          true -> retry_unregistered(alive, deadline)
        end

      error ->
        error
    end
  end
end
