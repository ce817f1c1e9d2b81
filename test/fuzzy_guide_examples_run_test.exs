defmodule WellBehaved.FuzzyGuideExamplesRunTest do
  # Every Elixir block of the fuzzy guides runs: each states what it
  # returns as a match, so a changed result fails here.
  use ExUnit.Case, async: true

  # each guide, and the least number of blocks it has
  @guides [{"fuzzy.md", 9}, {"coming_from_rapidfuzz.md", 4}]

  for {name, least} <- @guides do
    guide = Path.expand("../guides/#{name}", __DIR__)
    @external_resource guide

    blocks =
      Regex.scan(~r/```elixir\n(.*?)```/s, File.read!(guide), capture: :all_but_first)
      |> List.flatten()

    @guide guide
    test "#{name} has examples" do
      count = unquote(length(blocks))

      assert count >= unquote(least),
             "#{@guide}: #{count} blocks, expected #{unquote(least)} or more"
    end

    for {code, at} <- Enum.with_index(blocks, 1) do
      @code code
      @guide guide
      test "block #{at} of #{name} runs" do
        Code.eval_string(@code, [], file: @guide)
      end
    end
  end
end
