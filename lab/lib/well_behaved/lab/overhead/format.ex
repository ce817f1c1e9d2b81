defmodule WellBehaved.Lab.Overhead.Format do
  @moduledoc false
  # How the overhead suite writes its figures and inputs, in its progress
  # lines, its targets and its Markdown alike.

  import WellBehaved.Lab.Markdown, only: [fmt: 2]

  @doc "An input's label: `seed pair`, or `random` and its size."
  @spec case_label(map()) :: String.t()
  def case_label(%{kind: "seed"}), do: "seed pair"
  def case_label(%{bytes: bytes}), do: "random #{size_label(bytes)}"

  @doc "A size in bytes, as `100 B` or `10 kB`."
  @spec size_label(non_neg_integer()) :: String.t()
  def size_label(bytes) when bytes >= 1000, do: "#{div(bytes, 1000)} kB"
  def size_label(bytes), do: "#{bytes} B"

  @doc "A count, whole millions as `10M`."
  @spec compact(integer()) :: String.t()
  def compact(n) when rem(n, 1_000_000) == 0, do: "#{div(n, 1_000_000)}M"
  def compact(n), do: Integer.to_string(n)

  @doc "`n` and `word`, in the plural unless `n` is 1."
  @spec plural(integer(), String.t()) :: String.t()
  def plural(1, word), do: "1 #{word}"
  def plural(n, "batch"), do: "#{n} batches"
  def plural(n, word), do: "#{n} #{word}s"

  @doc "Decimals for a throughput in Gcell/s: two below 10, else one."
  @spec gdigits(number()) :: 1 | 2
  def gdigits(x) when x < 10, do: 2
  def gdigits(_), do: 1

  @doc "A time in nanoseconds, in s, ms, us or ns by its magnitude."
  @spec fmt_ns(number()) :: String.t()
  def fmt_ns(ns) when ns >= 1.0e9, do: "#{fmt(ns / 1.0e9, 3)} s"
  def fmt_ns(ns) when ns >= 1.0e6, do: "#{fmt(ns / 1.0e6, 2)} ms"
  def fmt_ns(ns) when ns >= 1.0e3, do: "#{fmt(ns / 1.0e3, 2)} us"
  def fmt_ns(ns), do: "#{fmt(ns, 0)} ns"
end
