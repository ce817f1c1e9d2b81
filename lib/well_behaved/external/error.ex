defmodule WellBehaved.External.Error do
  @moduledoc """
  Raised when a call to the external server pool (`WellBehaved.External`)
  gets no answer: the server died mid-call, did not reply in time, the
  pool shed the call (`:overloaded`), gave up restarting its servers for
  a while (`:unavailable`), or is not running. `reason` is the
  `{:error, reason}` the pool returned.
  """
  defexception [:reason, :message]

  @impl true
  def exception(opts) do
    reason = Keyword.fetch!(opts, :reason)
    %__MODULE__{reason: reason, message: "external server call failed: #{describe(reason)}"}
  end

  defp describe(:closed), do: "the server closed the connection (it died mid-call)"
  defp describe(:timeout), do: "no reply within the pool's :timeout_ms"
  defp describe(:checkout_timeout), do: "no free connection within the pool's :timeout_ms"
  defp describe(:not_running), do: "the pool is not running (stopped, or failed to start)"

  defp describe(:overloaded),
    do: "every connection busy and :max_waiting callers already waiting (load shed)"

  defp describe(:unavailable),
    do:
      "the pool's servers failed more than :max_restarts times in :max_seconds; it retries later"

  defp describe(:too_large), do: "the request is larger than the protocol's 1 GiB frame limit"
  defp describe(reason), do: inspect(reason)
end
