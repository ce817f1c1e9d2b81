defmodule WellBehaved.Lab.FileRead.Files do
  @moduledoc """
  The files the file suite reads, written from a shape, and the plain C
  reader it compares with.
  """

  @doc """
  Writes `path` in `shape`'s form: for `:fixed`, 10,000 different 99-byte
  lines (and `"\\n"`) repeated up to `bytes`; for `:growing`, line *i* of
  *i* bytes (and `"\\n"`) until the file has `bytes`.
  """
  @spec write(Path.t(), map()) :: :ok
  def write(path, %{kind: :fixed, bytes: bytes}) do
    # 10,000 different 100-byte lines, repeated
    block =
      for i <- 1..10_000, into: "" do
        text = Base.encode64(:crypto.hash(:sha512, <<i::32>>) <> :crypto.hash(:sha256, <<i::32>>))
        :binary.part(text, 0, 99) <> "\n"
      end

    File.open!(path, [:write, :raw, :binary], fn io ->
      full = div(bytes, byte_size(block))
      for _ <- 1..full//1, do: :ok = :file.write(io, block)
      :ok = :file.write(io, :binary.part(block, 0, bytes - full * byte_size(block)))
    end)
  end

  def write(path, %{kind: :growing, bytes: bytes}) do
    File.open!(path, [:write, :raw, :binary, {:delayed_write, 1_048_576, 1000}], fn io ->
      write_growing(io, 1, bytes)
    end)
  end

  defp write_growing(_io, _len, left) when left <= 0, do: :ok

  defp write_growing(io, len, left) do
    line = :binary.copy("g", min(len, max(left - 1, 0))) <> "\n"
    :ok = :file.write(io, line)
    write_growing(io, len + 1, left - byte_size(line))
  end

  @doc """
  The path of `wb_line_baseline`, the lab's plain C line reader; raises if
  it was not built.
  """
  @spec baseline_program() :: Path.t()
  def baseline_program do
    path = Path.join(:code.priv_dir(:well_behaved_lab), "wb_line_baseline")
    if File.exists?(path), do: path, else: raise("#{path} is missing: run `make native`")
  end
end
