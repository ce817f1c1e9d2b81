defmodule WellBehaved.File.Stream do
  @moduledoc """
  The stream of `WellBehaved.File.stream!/2`: `Enumerable` over the file's
  lines, `Collectable` to write into it.
  """
  defstruct [:path, :opts, append: false]

  @type t :: %__MODULE__{path: binary(), opts: keyword(), append: boolean()}

  # Enumerable and Collectable are in stream_protocols.ex: they call
  # WellBehaved.File, which builds this struct (no cycle between the two).
end
