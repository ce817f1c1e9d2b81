defmodule WellBehaved.External.Connection do
  @moduledoc false
  # What a WellBehaved.External.Pool's manager does on the file system and
  # the sockets, apart from its state: the server program's path, the
  # private directory of the sockets, a connection to a server, and a
  # server's stats asked on a connection of their own.

  # A driver buffer of 128 KiB: a 64 KiB reply arrives in one read (the
  # default, 1460 bytes, costs about 10 us more per 64 KiB round trip).
  # show_econnreset: a server that dies with a request unread in its socket
  # resets the connection (Linux AF_UNIX), one that read it closes it: the
  # caller tells a request never read (sent again) from one that died with
  # its server ({:error, :closed}).
  @socket_opts [:binary, packet: 4, active: false, buffer: 128 * 1024, show_econnreset: true]

  @doc "The server program: `{app, file}` is the file in the app's priv directory."
  def executable({app, file}), do: Path.join(:code.priv_dir(app), file)
  def executable(path), do: path

  @doc "A new directory only this user may enter, for the pool's sockets."
  def private_dir! do
    base = System.tmp_dir() || "/tmp"
    # a socket path must fit in sockaddr_un (108 bytes)
    base = if byte_size(base) > 60, do: "/tmp", else: base
    name = "wb_external-" <> Base.url_encode64(:crypto.strong_rand_bytes(9))
    dir = Path.join(base, name)
    File.mkdir!(dir)
    File.chmod!(dir, 0o700)
    dir
  end

  @doc "Makes `dir` again (private) if it is gone."
  def ensure_private_dir(dir) do
    case File.mkdir(dir) do
      :ok -> File.chmod!(dir, 0o700)
      {:error, :eexist} -> :ok
    end
  end

  @doc "A connection (passive) to the server listening at `path`."
  def connect(path, send_timeout_ms) do
    opts = [send_timeout: send_timeout_ms, send_timeout_close: true] ++ @socket_opts
    :gen_tcp.connect({:local, path}, 0, opts, 1_000)
  end

  @doc "The server at `path`'s answer to `{wb_stats}`, on a connection of its own."
  def server_stats(path) do
    with {:ok, sock} <- :gen_tcp.connect({:local, path}, 0, @socket_opts, 1_000) do
      result =
        with :ok <- :gen_tcp.send(sock, :erlang.term_to_binary({:wb_stats})),
             {:ok, reply} <- :gen_tcp.recv(sock, 0, 5_000) do
          case :erlang.binary_to_term(reply) do
            %{} = stats -> {:ok, stats}
            {:error, reason} -> {:error, reason}
          end
        end

      :gen_tcp.close(sock)
      result
    end
  end
end
