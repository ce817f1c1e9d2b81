defmodule WellBehaved.External.Options do
  @moduledoc false
  # The options of a pool, checked for WellBehaved.External.start/1 and
  # child_spec/1 and for `use WellBehaved.NIF, external: ...`; a module of
  # its own so that a stub module's compilation needs nothing of the pool.

  alias WellBehaved.Options

  # servers, connections and milliseconds: a 32-bit count each
  @max_count 0xFFFF_FFFF
  @counts [:servers, :connections, :timeout_ms, :cancel_timeout_ms, :max_seconds, :retry_ms]
  # counts that may be 0
  @zero_counts [:max_restarts]
  # in the order the docs give them
  @start_options [:name, :executable, :servers, :connections, :timeout_ms, :cancel_timeout_ms] ++
                   [:max_waiting, :max_restarts, :max_seconds, :retry_ms]

  @doc false
  # :ok, or an ArgumentError naming `function` and the option
  @spec check!(String.t(), term()) :: :ok
  def check!(function, opts) do
    unless is_list(opts), do: Options.not_keyword!(function, opts)
    Enum.each(opts, &check_option!(function, &1, opts))
  end

  defp check_option!(function, option, opts) do
    case option do
      {key, value} when key in @counts ->
        Options.integer!(function, key, value, 1..@max_count)

      {key, value} when key in @zero_counts ->
        Options.integer!(function, key, value, 0..@max_count)

      {:max_waiting, :infinity} ->
        :ok

      {:max_waiting, value} when is_integer(value) and value in 0..@max_count ->
        :ok

      {:max_waiting, value} ->
        Options.invalid!(
          function,
          :max_waiting,
          value,
          "an integer in 0..#{@max_count} or :infinity"
        )

      {:name, name} when is_atom(name) and name not in [nil, true, false] ->
        :ok

      {:name, name} ->
        Options.invalid!(function, :name, name, "an atom")

      {:executable, {app, file}} when is_atom(app) and is_binary(file) ->
        :ok

      {:executable, path} when is_binary(path) ->
        :ok

      {:executable, other} ->
        Options.invalid!(function, :executable, other, "a path or {app, file}")

      other ->
        Options.bad_option!(function, other, @start_options, opts)
    end
  end
end
