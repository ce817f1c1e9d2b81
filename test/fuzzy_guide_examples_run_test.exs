defmodule WellBehaved.FuzzyGuideExamplesRunTest do
  # Every Elixir block of guides/fuzzy.md runs: each states what it
  # returns as a match, so a changed result fails here.
  use ExUnit.Case, async: true

  @guide Path.expand("../guides/fuzzy.md", __DIR__)

  blocks =
    Regex.scan(~r/```elixir\n(.*?)```/s, File.read!(@guide), capture: :all_but_first)
    |> List.flatten()

  @external_resource @guide

  test "the guide has examples" do
    assert length(unquote(blocks)) >= 8
  end

  for {code, at} <- Enum.with_index(blocks, 1) do
    @code code
    test "block #{at} of the fuzzy guide runs" do
      Code.eval_string(@code, [], file: @guide)
    end
  end
end
