defmodule WellBehaved.Lab.FileRead.Readers do
  @moduledoc """
  The ways of reading a file's lines that run in the VM, each counting the
  lines of a whole file; `c_memchr` and `c_core` run as a separate program
  (`WellBehaved.Lab.FileRead.Child`).
  """

  alias WellBehaved.File, as: WFile

  @doc """
  Reads the file at `path` to its end with `method` and `buffer` (bytes;
  `nil` for `:file_stream`, whose buffer cannot be chosen) and returns the
  number of lines.
  """
  @spec count_lines(atom(), Path.t(), pos_integer() | nil) :: non_neg_integer()
  def count_lines(:wb_read_line, path, buffer) do
    file = WFile.open!(path, :read, buffer_bytes: buffer)
    n = wb_lines(file, 0)
    :ok = WFile.close(file)
    n
  end

  def count_lines(:wb_read_lines, path, buffer) do
    file = WFile.open!(path, :read, buffer_bytes: buffer)
    n = wb_batches(file, 0)
    :ok = WFile.close(file)
    n
  end

  def count_lines(:erl_read_line, path, buffer) do
    {:ok, io} = :file.open(path, [:read, :raw, :binary, {:read_ahead, buffer}])
    n = erl_lines(io, 0)
    :ok = :file.close(io)
    n
  end

  def count_lines(:erl_read_split, path, buffer) do
    {:ok, io} = :file.open(path, [:read, :raw, :binary])
    n = split_lines(io, buffer, "", 0)
    :ok = :file.close(io)
    n
  end

  def count_lines(:file_stream, path, nil) do
    path |> File.stream!() |> Enum.reduce(0, fn _line, n -> n + 1 end)
  end

  defp wb_lines(file, n) do
    case WFile.read_line(file) do
      {:ok, _line} -> wb_lines(file, n + 1)
      :eof -> n
    end
  end

  defp wb_batches(file, n) do
    case WFile.read_lines(file, 4096) do
      {:ok, lines} -> wb_batches(file, n + length(lines))
      :eof -> n
    end
  end

  defp erl_lines(io, n) do
    case :file.read_line(io) do
      {:ok, _line} -> erl_lines(io, n + 1)
      :eof -> n
    end
  end

  defp split_lines(io, buffer, carry, n) do
    case :file.read(io, buffer) do
      {:ok, chunk} ->
        parts = :binary.split(carry <> chunk, "\n", [:global])
        split_lines(io, buffer, List.last(parts), n + length(parts) - 1)

      :eof ->
        if carry == "", do: n, else: n + 1
    end
  end
end
