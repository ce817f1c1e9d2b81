defmodule WellBehaved.DocumentedExamplesRunTest do
  # The iex> examples of the modules that NIF authors read first (the
  # testing kit's included) run as
  # tests, as those of Levenshtein, File, External, Probe and Runtime do
  # in their own test files.
  use ExUnit.Case, async: true

  doctest WellBehaved.Options
  doctest WellBehaved.SDK
  doctest WellBehaved.Job
  doctest WellBehaved.Testing
  doctest WellBehaved.Stats
  doctest WellBehaved.Runtime.Hops
end
