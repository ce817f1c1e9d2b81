# The protocols of WellBehaved.File.Stream (the struct is in stream.ex).
defimpl Enumerable, for: WellBehaved.File.Stream do
  alias WellBehaved.File, as: WFile

  def reduce(%{path: path, opts: opts}, acc, fun) do
    Enumerable.reduce(
      Stream.resource(
        fn -> WFile.open!(path, :read, opts) end,
        fn file ->
          case WFile.read_lines(file, 1024) do
            {:ok, lines} -> {lines, file}
            :eof -> {:halt, file}
            {:error, reason} -> raise WFile.Error, reason: reason, action: "read", path: path
          end
        end,
        &WFile.close/1
      ),
      acc,
      fun
    )
  end

  def count(_stream), do: {:error, __MODULE__}
  def member?(_stream, _value), do: {:error, __MODULE__}
  def slice(_stream), do: {:error, __MODULE__}
end

defimpl Collectable, for: WellBehaved.File.Stream do
  alias WellBehaved.File, as: WFile

  def into(%{path: path, opts: opts, append: append} = stream) do
    {mode, flags} = if append, do: {:append, [:create]}, else: {:write, [:create, :truncate]}
    file = WFile.open!(path, mode, flags ++ opts)

    collector = fn
      file, {:cont, data} ->
        case WFile.write(file, data) do
          :ok -> file
          {:error, reason} -> raise WFile.Error, reason: reason, action: "write", path: path
        end

      file, :done ->
        case WFile.close(file) do
          :ok -> stream
          {:error, reason} -> raise WFile.Error, reason: reason, action: "close", path: path
        end

      file, :halt ->
        WFile.close(file)
        :ok
    end

    {file, collector}
  end
end
