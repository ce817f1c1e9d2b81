defmodule WellBehaved.Lab.HttpLoad.Server do
  @moduledoc """
  The HTTP server of the HTTP-under-load suite's child VM: OTP's `:inets`
  httpd on `127.0.0.1`, an ephemeral port, answering through
  `WellBehaved.Lab.HttpLoad.Handler`.
  """

  alias WellBehaved.Lab.HttpLoad.Handler

  @doc """
  Starts httpd with `dir` as its server and document root and returns its
  pid and port.
  """
  @spec start!(Path.t()) :: {pid(), :inet.port_number()}
  def start!(dir) do
    {:ok, _} = Application.ensure_all_started(:inets)
    root = String.to_charlist(dir)

    {:ok, httpd} =
      otp(:inets, :start, [
        :httpd,
        [
          port: 0,
          bind_address: {127, 0, 0, 1},
          ipfamily: :inet,
          server_name: ~c"wb_http_load",
          server_root: root,
          document_root: root,
          modules: [Handler],
          # without it the header and the body go out as two segments and
          # the second waits for the client's delayed ACK: ~40 ms a request
          socket_type: {:ip_comm, [nodelay: true]}
        ]
      ])

    [port: port] = otp(:httpd, :info, [httpd, [:port]])
    {httpd, port}
  end

  @doc """
  Loads httpd's request path (dozens of modules; under load that alone
  takes seconds, and it is not what is measured): two keep-alive requests
  on one connection, as wrk makes them.
  """
  @spec warm_up(:inet.port_number()) :: :ok
  def warm_up(port) do
    {:ok, socket} = :gen_tcp.connect({127, 0, 0, 1}, port, [:binary, active: false], 5_000)
    request = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

    for _ <- 1..2 do
      :ok = :gen_tcp.send(socket, request)
      {:ok, _} = recv_response(socket, "")
    end

    :gen_tcp.close(socket)
  end

  @doc "Stops a server `start!/1` started."
  @spec stop!(pid()) :: :ok
  def stop!(httpd), do: :ok = otp(:inets, :stop, [:httpd, httpd])

  defp recv_response(socket, acc) do
    if String.ends_with?(acc, Handler.body()) do
      {:ok, acc}
    else
      with {:ok, data} <- :gen_tcp.recv(socket, 0, 5_000), do: recv_response(socket, acc <> data)
    end
  end

  # :inets is started in the child VMs only and is not an application the
  # library depends on (mix.exs does not list it), so it is called through
  # apply/3 with a variable module, which the compiler does not check
  defp otp(module, function, args), do: apply(module, function, args)
end
