defmodule WellBehaved.Fuzzy.Call do
  @moduledoc false
  # The options of every WellBehaved.Fuzzy function, checked once into a
  # struct: the scorer and its parameters, the kind of score and its
  # cutoff, the processor, the limit of a search, and the runtime's
  # schedule. `native/1` is the tuple the native jobs decode
  # (c_src/nif/fuzzy_job.c).

  alias WellBehaved.{Options, Runtime}

  # the scorers and kinds, in the order of c_src/fuzzy/fuzzy.h (a test
  # compares them with the native side's)
  @edit [:levenshtein, :indel, :osa, :damerau_levenshtein, :hamming, :lcs_seq, :prefix, :postfix]
  @jaro [:jaro, :jaro_winkler]
  @ratios [
    :ratio,
    :partial_ratio,
    :token_sort_ratio,
    :token_set_ratio,
    :token_ratio,
    :partial_token_sort_ratio,
    :partial_token_set_ratio,
    :partial_token_ratio,
    :wratio,
    :qratio
  ]
  @scorers @edit ++ @jaro ++ @ratios
  # the scorers that say where their score is (alignment: true)
  @aligned [:ratio, :partial_ratio]
  @kinds [:distance, :similarity, :normalized_distance, :normalized_similarity]
  # Jaro-Winkler's largest prefix weight (as the native side's)
  @prefix_weight_most 0.25
  # the largest weight and integer cutoff: the native side's 64-bit
  # unsigned integers, in which the integer scores are exact
  @u64_most 0xFFFF_FFFF_FFFF_FFFF

  defstruct scorer: :wratio,
            score: :normalized_similarity,
            score_cutoff: nil,
            weights: {1, 1, 1},
            prefix_weight: 0.1,
            pad: true,
            processor: nil,
            unit: :byte,
            limit: 5,
            schedule: :auto,
            tiny_slices: false,
            as: :list,
            workers: nil,
            ordered: true,
            alignment: false,
            remote: []

  @type t :: %__MODULE__{}

  @doc "The options of a pair's score, which every function takes."
  def pair,
    do: [
      :scorer,
      :score,
      :score_cutoff,
      :weights,
      :prefix_weight,
      :pad,
      :processor,
      :unit,
      :schedule,
      :tiny_slices,
      :score_hint
    ]

  @doc """
  Checks that a call on an index has no processor of its own: the
  index's candidates were processed as they came in.
  """
  @spec no_processor!(String.t(), t()) :: :ok
  def no_processor!(_name, %{processor: nil}), do: :ok

  def no_processor!(name, call) do
    Options.invalid!(name, :processor, call.processor, "none with an index: its candidates \
    were processed when they came in, by the processor given to Index.new/2")
  end

  @doc "The scorers, in the native order."
  def scorers, do: @scorers

  @doc "The kinds of score, in the native order."
  def kinds, do: @kinds

  @doc "The scorers that take `alignment: true` (the native side's too: a test compares them)."
  def aligned, do: @aligned

  @doc "The largest `prefix_weight:` Jaro-Winkler takes."
  def prefix_weight_most, do: @prefix_weight_most

  @doc """
  Checks `opts` against `known` for the function `name`: the keys first,
  then each value, then the values that depend on each other (a cutoff
  and its kind, parameters and their scorer).
  """
  # `modes`: schedules accepted besides the runtime's (`[:external]` for
  # score/3)
  @spec options!(String.t(), term(), [atom()], [atom()]) :: t()
  def options!(name, opts, known, modes \\ [])

  def options!(name, opts, known, modes) when is_list(opts) do
    Enum.each(opts, fn
      {key, _} when is_atom(key) ->
        if key not in known, do: Options.unknown!(name, key, known)

      other ->
        Options.bad_option!(name, other, known, opts)
    end)

    call =
      Enum.reduce(opts, %__MODULE__{}, fn
        {:schedule, mode}, call -> %{call | schedule: Runtime.check_mode!(mode, name, modes)}
        {key, value}, call -> put(call, key, value, name)
      end)

    consistent!(call, opts, name)
  end

  def options!(name, opts, _known, _modes), do: Options.not_keyword!(name, opts)

  # a function of two binaries: run in Elixir (WellBehaved.Fuzzy.FunScorer)
  defp put(call, :scorer, fun, _name) when is_function(fun, 2), do: %{call | scorer: fun}

  defp put(call, :scorer, scorer, name) when is_atom(scorer),
    do: %{call | scorer: Options.one_of!(name, :scorer, scorer, @scorers)}

  defp put(_call, :scorer, scorer, name) do
    Options.invalid!(
      name,
      :scorer,
      scorer,
      "one of #{Enum.map_join(@scorers, ", ", &inspect/1)}, or a function of two binaries"
    )
  end

  defp put(call, :score, kind, name),
    do: %{call | score: Options.one_of!(name, :score, kind, @kinds)}

  defp put(call, :score_cutoff, cutoff, _name) when is_number(cutoff) or is_nil(cutoff),
    do: %{call | score_cutoff: cutoff}

  defp put(_call, :score_cutoff, cutoff, name),
    do: Options.invalid!(name, :score_cutoff, cutoff, "a number or nil")

  defp put(call, :weights, {i, d, s} = weights, _name)
       when is_integer(i) and i >= 0 and is_integer(d) and d >= 0 and is_integer(s) and s >= 0 and
              i <= @u64_most and d <= @u64_most and s <= @u64_most,
       do: %{call | weights: weights}

  defp put(_call, :weights, weights, name) do
    Options.invalid!(
      name,
      :weights,
      weights,
      "{insertion, deletion, substitution}: integers in 0..#{@u64_most}"
    )
  end

  defp put(call, :prefix_weight, w, _name)
       when is_number(w) and w >= 0 and w <= @prefix_weight_most,
       do: %{call | prefix_weight: w / 1}

  defp put(_call, :prefix_weight, w, name),
    do: Options.invalid!(name, :prefix_weight, w, "a number in 0.0..#{@prefix_weight_most}")

  defp put(call, :pad, pad, _name) when is_boolean(pad), do: %{call | pad: pad}
  defp put(_call, :pad, pad, name), do: Options.invalid!(name, :pad, pad, "true or false")

  defp put(call, :processor, p, _name) when p in [nil, :default, :fold] or is_function(p, 1),
    do: %{call | processor: p}

  defp put(_call, :processor, p, name),
    do:
      Options.invalid!(name, :processor, p, "nil, :default, :fold or a function of one argument")

  defp put(call, :unit, unit, _name) when unit in [:byte, :codepoint, :grapheme],
    do: %{call | unit: unit}

  defp put(_call, :unit, unit, name),
    do: Options.invalid!(name, :unit, unit, ":byte, :codepoint or :grapheme")

  # nil: every candidate, as rapidfuzz's limit=None
  defp put(call, :limit, all, _name) when all in [:all, nil], do: %{call | limit: :all}

  defp put(call, :limit, limit, _name) when is_integer(limit) and limit >= 0,
    do: %{call | limit: limit}

  defp put(_call, :limit, limit, name),
    do: Options.invalid!(name, :limit, limit, "a non-negative integer, :all or nil")

  defp put(call, :as, as, _name) when as in [:list, :binary], do: %{call | as: as}
  defp put(_call, :as, as, name), do: Options.invalid!(name, :as, as, ":list or :binary")

  defp put(call, :ordered, ordered, _name) when is_boolean(ordered),
    do: %{call | ordered: ordered}

  defp put(_call, :ordered, ordered, name),
    do: Options.invalid!(name, :ordered, ordered, "true or false")

  defp put(call, :workers, n, name),
    do: %{call | workers: Options.integer!(name, :workers, n, 1..1024)}

  # rapidfuzz's hint of the score expected, which picks a faster kernel
  # there: taken for code ported as it is, and not needed (a search bars
  # candidates by its cutoff and its worst kept hit)
  defp put(call, :score_hint, hint, _name) when is_number(hint) or is_nil(hint), do: call

  defp put(_call, :score_hint, hint, name),
    do: Options.invalid!(name, :score_hint, hint, "a number or nil (it is not needed)")

  # an index split over nodes: checked by WellBehaved.Search.Distributed
  defp put(call, key, value, _name) when key in [:timeout, :partial],
    do: %{call | remote: [{key, value} | call.remote]}

  defp put(call, :alignment, align, _name) when is_boolean(align), do: %{call | alignment: align}

  defp put(_call, :alignment, align, name),
    do: Options.invalid!(name, :alignment, align, "a boolean")

  defp put(call, :tiny_slices, tiny, name),
    do: %{call | tiny_slices: Runtime.check_tiny!(tiny, name)}

  defp consistent!(call, opts, name) do
    if Keyword.has_key?(opts, :weights) and call.scorer != :levenshtein,
      do:
        Options.invalid!(name, :weights, call.weights, "no weights: only :levenshtein takes them")

    if Keyword.has_key?(opts, :pad) and call.scorer != :hamming,
      do: Options.invalid!(name, :pad, call.pad, "no pad: only :hamming takes it")

    if Keyword.has_key?(opts, :prefix_weight) and call.scorer != :jaro_winkler do
      Options.invalid!(
        name,
        :prefix_weight,
        call.prefix_weight,
        "no prefix weight: only :jaro_winkler takes one"
      )
    end

    if call.alignment and call.scorer not in @aligned do
      Options.invalid!(
        name,
        :alignment,
        true,
        "no alignment for #{inspect(call.scorer)}: only #{Options.listing(@aligned)} take it"
      )
    end

    case call.score_cutoff do
      nil -> call
      cutoff -> %{call | score_cutoff: cutoff!(call, cutoff, name)}
    end
  end

  # a cutoff in the terms of the kind of score asked for (a function
  # scorer's own: any number)
  defp cutoff!(%{scorer: fun}, cutoff, name) when is_function(fun) do
    if is_number(cutoff),
      do: cutoff,
      else: Options.invalid!(name, :score_cutoff, cutoff, "a number or nil")
  end

  defp cutoff!(call, cutoff, name) do
    case {integers?(call), range(call)} do
      {true, _} when is_integer(cutoff) and cutoff >= 0 and cutoff <= @u64_most ->
        cutoff

      {true, _} ->
        Options.invalid!(
          name,
          :score_cutoff,
          cutoff,
          "a non-negative integer up to #{@u64_most} for #{what(call)}"
        )

      {false, first..last//_} when cutoff >= first and cutoff <= last ->
        cutoff / 1

      {false, first..last//_} ->
        Options.invalid!(
          name,
          :score_cutoff,
          cutoff,
          "a number in #{first}..#{last} for #{what(call)}"
        )
    end
  end

  defp what(call),
    do: "#{inspect(call.scorer)}'s #{call.score |> Atom.to_string() |> String.replace("_", " ")}"

  @doc "Whether the scores are integers: an edit distance's distance or similarity."
  @spec integers?(t()) :: boolean()
  def integers?(%{scorer: scorer, score: kind}),
    do: is_atom(scorer) and scorer in @edit and kind in [:distance, :similarity]

  @doc "Whether a lower score is better."
  @spec distance?(t()) :: boolean()
  def distance?(%{score: kind}), do: kind in [:distance, :normalized_distance]

  # the range of a float score
  defp range(%{score: kind}) when kind in [:normalized_distance, :normalized_similarity], do: 0..1
  defp range(%{scorer: scorer}) when scorer in @ratios, do: 0..100
  defp range(_call), do: 0..1

  @doc "The options as the native jobs take them."
  @spec native(t()) :: tuple()
  def native(%__MODULE__{weights: {i, d, s}} = call),
    do:
      {call.scorer, call.score, call.score_cutoff, i, d, s, call.prefix_weight, call.pad,
       call.alignment}
end
