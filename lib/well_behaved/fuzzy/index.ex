defmodule WellBehaved.Fuzzy.Index do
  @moduledoc """
  Candidates kept in native memory for repeated searches with
  `WellBehaved.Fuzzy.extract/3` and `extract_one/3`, which take an index
  in place of a list or a map: nothing is copied at each search, and the
  processor ran once, when the candidates came in.

  An index is a value: `add/2` and `delete/2` return a new index and leave
  the old one as it was (both share what did not change; an index split
  over nodes, see `new/2`, is changed where its shards are). Its entries are
  `{key, candidate}`, in the order they came in; a candidate given without
  a key gets the next position as its key (0, 1, ..., each entry taking
  one; and past every integer key in 0..2^63-1 the index was given, so
  never the key of an entry). It enumerates
  (`Enum.to_list/1` gives the entries), and `dump/1` makes it a binary
  that `load/1` makes an index again, on this node or another.

  Inside, the candidates are in a few segments, each packed natively
  once (the candidates as scored, as given when a processor changed them,
  and their keys): an addition is a new segment, merged with the last one
  while it is at least half its size (so there are O(log n) segments, and
  each candidate is packed O(log n) times over the index's life); a
  deletion packs the segments that held the keys again. The candidates as
  scored come with the search core's batches, made once (a vector lane
  per candidate of up to 64 bytes: about five times their bytes), and, where
  a candidate has several tokens, with its tokens sorted (and their
  batches), which the token sort scores compare: made natively from the
  packed candidates, by a job that works a budget at a time, as the
  batches are. Nothing of the
  candidates' size lives in the process: an index value is a few
  references, cheap to keep in a process, to send and to collect; a hit's
  text is a binary over the native memory, not a copy. The native memory
  is freed when the last index using it (and the last hit's binary) is
  garbage collected, and counts in `WellBehaved.Runtime.stats/0`'s
  `resident_bytes` while it lives.

      iex> alias WellBehaved.Fuzzy.Index
      iex> index = Index.new(["apple", "maple"], processor: :default)
      iex> index = Index.add(index, [{:fruit, "Apply"}])
      iex> WellBehaved.Fuzzy.extract("APPEL", index, scorer: :indel, score: :distance, limit: 2)
      [{"apple", 2, 0}, {"Apply", 2, :fruit}]
      iex> index |> Index.delete(0) |> Enum.to_list()
      [{1, "maple"}, {:fruit, "Apply"}]
      iex> index |> Index.dump() |> Index.load() |> Index.size()
      3
  """

  alias WellBehaved.{Options, Runtime}
  alias WellBehaved.Fuzzy.Index.{Dump, Segment}
  alias WellBehaved.Fuzzy.{Choices, Processor}
  alias WellBehaved.Search.{Distributed, Shard}

  @new "WellBehaved.Fuzzy.Index.new/2"
  @add "WellBehaved.Fuzzy.Index.add/2"
  @dump "WellBehaved.Fuzzy.Index.dump/1"
  @load "WellBehaved.Fuzzy.Index.load/2"
  @load_options [:nodes, :timeout, :max_bytes]
  @new_options [:processor, :sorted_tokens, :nodes, :timeout]

  @enforce_keys [:segments, :size, :next, :processor]
  defstruct [
    :segments,
    :size,
    :next,
    :processor,
    shards: nil,
    timeout: 5_000,
    sorted_tokens: true
  ]

  @typedoc """
  An index: its segments (oldest first), its number of entries, the key
  the next candidate without one gets, the processor its candidates
  went through (`nil`, `:default`, `:fold`, or a function), its shards across
  nodes and their `timeout`, and whether it keeps its candidates' tokens
  sorted (`sorted_tokens:` of `new/2`).
  """
  @type t :: %__MODULE__{
          segments: [Segment.t()],
          size: non_neg_integer(),
          next: non_neg_integer(),
          processor: nil | :default | :fold | (binary() -> binary()),
          shards: [{node(), pid(), non_neg_integer()}] | nil,
          timeout: pos_integer(),
          sorted_tokens: boolean()
        }

  @doc """
  An index of `choices` (binaries, `{key, binary}` pairs, or a map, as
  `WellBehaved.Fuzzy.extract/3` takes them).

  `processor:` (`nil`, `:default`, `:fold`, or a function of one binary) is applied
  to every candidate now, and to the query of every search on the index.
  A search on an index compares bytes or codepoints: `unit: :grapheme`
  needs a numbering of the clusters shared by the query and every
  candidate, which an index does not keep, and raises `ArgumentError`
  (search a list for graphemes).
  Raises `ArgumentError` on a candidate that is not a binary; returns
  `{:error, :enomem}` when native memory runs out.

  `sorted_tokens:` (default `true`): whether the index keeps each
  candidate's tokens sorted, for the token sort scores
  (`:token_sort_ratio`, `:partial_token_sort_ratio`), which then compare
  them in the search core's batches. They are made natively, a budget at
  a time; on candidates of several words they come with batches of their
  own, laid out as the candidates', which add about two thirds to the cost
  of `new/2` and `add/2` (200,000 names of two words, on a 2-vCPU AMD EPYC
  shared with other work, November 29 2026, CPU time of the VM's threads,
  median of 7: 82 ms, 49 ms without, `WellBehaved.Levenshtein.Index.new/2`
  50 ms; names of one word, whose tokens need no sorting: 38 ms,
  Levenshtein's 35). With `false` the index is made as fast as the packing
  allows, and those two scorers sort each candidate's tokens as they
  score it: the same scores, far slower searches (on two-word names, on
  a 2-vCPU Xeon, the 10 best by `:token_sort_ratio` took 90 ms where
  sorted tokens answer in 0.8 ms). The other scorers
  are not concerned. An index made by
  `WellBehaved.Levenshtein.Index.new/2` keeps no sorted tokens.

  With `nodes: [node, ...]` (connected nodes, this one included if you
  like, each running `:well_behaved`), the entries are split into one
  contiguous shard per node, each an index there held by a process that
  lives as long as the process calling `new/2`. A search asks every shard
  in parallel and merges the hits: the same answer as one index here.
  `timeout:` (milliseconds, default 5000) bounds each node's answer, here
  and in every search, addition and deletion; a search may give its own,
  and `partial: true` (see `WellBehaved.Fuzzy.extract/3`). Such an index
  enumerates, sizes, dumps, takes additions and deletions (see `add/2`
  and `delete/2`: its shards change where they are) and serves
  `WellBehaved.Fuzzy.cdist/3` like any other; its order (enumeration,
  ties of a search, columns of `cdist/3`) is shard after shard. Returns
  `{:error, {reason, node}}` when a node does not take its shard
  (reasons as `WellBehaved.Fuzzy.extract/3` lists them).
  """
  @spec new(WellBehaved.Fuzzy.choices(), keyword()) :: t() | {:error, :enomem}
  def new(choices, opts \\ []) do
    if not is_list(opts), do: Options.not_keyword!(@new, opts)

    for {key, _} = option <- opts, key not in @new_options do
      Options.bad_option!(@new, option, @new_options, opts)
    end

    processor = check_processor!(@new, Keyword.get(opts, :processor))
    tokens = Options.boolean!(@new, :sorted_tokens, Keyword.get(opts, :sorted_tokens, true))
    new_options = [processor: processor, sorted_tokens: tokens]

    index = %__MODULE__{
      segments: [],
      size: 0,
      next: 0,
      processor: processor,
      sorted_tokens: tokens
    }

    case Keyword.has_key?(opts, :nodes) do
      false ->
        add_here(index, choices, @new)

      true ->
        settings = Distributed.options(@new, Keyword.take(opts, [:nodes, :timeout]))
        {texts, keys} = entries!(@new, choices, 0)
        count = length(texts)
        keys = key_list(keys, count)
        pairs = Enum.zip(keys, texts)
        chunks = Distributed.split(pairs, count, settings.nodes)

        start = fn chunk, _first ->
          {Shard, :start_value, [self(), __MODULE__, :new, [chunk, new_options]]}
        end

        case Distributed.hold(settings.nodes, chunks, settings.timeout, start) do
          {:ok, shards} ->
            next = next_after(0, keys, count)
            %{index | shards: shards, size: count, next: next, timeout: settings.timeout}

          {:error, _} = error ->
            error
        end
    end
  end

  @doc false
  # An index of `candidates`, binaries alone (WellBehaved.Levenshtein.Index.new/2,
  # on this node or as a shard): their positions from `first` as keys, no
  # processor, no sorted tokens, the batches made by a job in `schedule`
  # (`tiny_slices`); `name` is the function a bad candidate is raised for.
  @spec of_binaries([binary()], non_neg_integer(), Runtime.mode(), boolean(), String.t()) ::
          t() | {:error, :enomem}
  def of_binaries(candidates, first, schedule, tiny_slices, name) do
    build = %{Segment.build(false) | schedule: schedule, tiny_slices: tiny_slices, name: name}
    index = %__MODULE__{segments: [], size: 0, next: first, processor: nil, sorted_tokens: false}

    case Segment.new(candidates, candidates, {:positions, first}, build) do
      {:ok, nil} -> index
      {:ok, s} -> %{index | segments: [s], size: s.count, next: first + s.count}
      {:error, _} = error -> error
    end
  end

  @doc """
  The index with `choices` added after its entries (processed by the
  index's processor). Returns `{:error, :enomem}` when native memory runs
  out. A candidate without a key takes the next position (see the
  module's doc); raises `ArgumentError` when the positions would pass
  2^63-1 (keys given near it moved them there).

  On an index split over nodes, the new entries go to the shard holding
  the fewest (the first of those), made there, and come after that
  shard's entries (the index's order is shard after shard); candidates
  without a key take the next positions as here. The shard is changed
  where it is: every copy of the index value shares it, so use the value
  returned (its size and next key are up to date), from one process at a
  time: two additions from the same value (or an older one) give their
  entries the same positions, and their sizes count only their own. Give
  keys of your own (`{key, text}` pairs, a map) where several processes
  add. Returns `{:error,
  {reason, node}}` when that shard does not answer within the index's
  `timeout:` (reasons as `WellBehaved.Fuzzy.extract/3` lists them,
  `:enomem` when native memory ran out there); after a `:timeout` the
  entries may have been added all the same.
  """
  @spec add(t(), WellBehaved.Fuzzy.choices()) ::
          t() | {:error, :enomem | {atom() | tuple(), node()}}
  def add(%__MODULE__{shards: [_ | _] = shards} = index, choices) do
    {texts, keys} = entries!(@add, choices, index.next)

    case length(texts) do
      0 ->
        index

      count ->
        # the shard holding the fewest entries (the first of those)
        {{node, pid, size}, at} =
          shards |> Enum.with_index() |> Enum.min_by(fn {{_, _, size}, _} -> size end)

        # keys given here (positions from the index's next): a shard's own
        # next is not the index's
        keys = key_list(keys, count)
        pairs = Enum.zip(keys, texts)
        call = [{node, {__MODULE__, :update_held, [pid, :add, [pairs]]}, size}]

        case Distributed.ask(call, settings(index), fn [{new_size, _}] -> new_size end) do
          {:error, _} = error ->
            error

          new_size ->
            shards = List.replace_at(shards, at, {node, pid, new_size})
            next = next_after(index.next, keys, count)
            %{index | shards: shards, size: index.size + count, next: next}
        end
    end
  end

  def add(%__MODULE__{} = index, choices), do: add_here(index, choices, @add)

  # the entries added to an index of this node; `name`: the public
  # function its errors name (new/2 or add/2)
  defp add_here(index, choices, name) do
    {texts, keys} = entries!(name, choices, index.next)
    fun = Processor.function(index.processor)
    scored = if fun, do: Enum.map(texts, fun), else: texts
    build = %{Segment.build(index.sorted_tokens) | name: name}

    case Segment.new(texts, scored, keys, build) do
      {:ok, nil} ->
        index

      {:ok, segment} ->
        segments = Segment.merge(index.segments ++ [segment], build)
        added = segment.count
        next = next_after(index.next, keys, added)
        %{index | segments: segments, size: index.size + added, next: next}

      {:error, _} = error ->
        error
    end
  end

  @doc """
  The index without the entries whose key is `key`, or is in `keys` (a
  list). Keys it does not hold are ignored.

  On an index split over nodes, every shard deletes the keys it holds,
  where it is, all in parallel (each within the index's `timeout:`); as
  with `add/2`, every copy of the index value shares the shards, so use
  the value returned. Returns `{:error, {reason, node}}` when a shard does
  not answer (the first in the index's order; reasons as
  `WellBehaved.Fuzzy.extract/3` lists them): the shards that did
  answer have deleted the keys, and the same deletion may be made again.
  """
  @spec delete(t(), WellBehaved.Fuzzy.key() | [WellBehaved.Fuzzy.key()]) ::
          t() | {:error, :enomem | {atom() | tuple(), node()}}
  def delete(%__MODULE__{shards: [_ | _] = shards} = index, keys) do
    keys = if is_list(keys), do: keys, else: [keys]

    calls =
      for {node, pid, size} <- shards,
          do: {node, {__MODULE__, :update_held, [pid, :delete, [keys]]}, size}

    case Distributed.ask(calls, settings(index), &Enum.map(&1, fn {size, _} -> size end)) do
      {:error, _} = error ->
        error

      sizes ->
        shards = for {{node, pid, _}, size} <- Enum.zip(shards, sizes), do: {node, pid, size}
        %{index | shards: shards, size: Enum.sum(sizes)}
    end
  end

  def delete(%__MODULE__{} = index, keys) when is_list(keys) do
    index.segments
    |> Enum.reduce_while({[], 0}, fn segment, {kept, size} ->
      case Segment.without(segment, keys, Segment.build(index.sorted_tokens)) do
        {:ok, nil} -> {:cont, {kept, size}}
        {:ok, s} -> {:cont, {[s | kept], size + Segment.live(s)}}
        {:error, _} = error -> {:halt, error}
      end
    end)
    |> case do
      {:error, _} = error -> error
      {kept, size} -> %{index | segments: Enum.reverse(kept), size: size}
    end
  end

  def delete(%__MODULE__{} = index, key), do: delete(index, [key])

  @doc "The number of entries."
  @spec size(t()) :: non_neg_integer()
  def size(%__MODULE__{size: size}), do: size

  @doc """
  The index as a binary (its entries, as given and as processed), for
  `load/1` here or on another node. A processor that is a function is not
  kept: the loaded index searches with no processor for its queries
  (process them yourself), `:default` and `:fold` are kept.
  """
  @spec dump(t()) :: binary()
  def dump(%__MODULE__{shards: [_ | _]} = index) do
    rows =
      index
      |> held(@dump, {__MODULE__, :dump, []})
      |> Enum.flat_map(fn binary -> elem(:erlang.binary_to_term(binary), 4) end)

    Dump.encode(index.processor, index.next, rows)
  end

  def dump(%__MODULE__{} = index) do
    rows =
      for s <- index.segments do
        {keys, texts, scored} = Segment.entries(s)
        {keys, texts, if(s.texts == nil, do: nil, else: scored)}
      end

    Dump.encode(index.processor, index.next, rows)
  end

  @doc false
  # every shard's answer to m.f(its index, a...), in order; raises when
  # one does not answer
  def held(%__MODULE__{} = index, name, mfa) do
    case ask_held(index, mfa) do
      {:error, {reason, node}} ->
        raise RuntimeError, "#{name}: the shard on #{node} did not answer: #{inspect(reason)}"

      answers ->
        answers
    end
  end

  @doc false
  # every shard's answer to m.f(its index, a...), in order, or
  # {:error, {reason, node}} for the first that does not answer
  def ask_held(%__MODULE__{shards: shards} = index, {m, f, a}) do
    calls =
      for {node, pid, size} <- shards, do: {node, {Shard, :with_value, [pid, m, f, a]}, size}

    Distributed.ask(calls, settings(index), &Enum.map(&1, fn {x, _} -> x end))
  end

  defp settings(index), do: %{timeout: index.timeout, partial: false}

  @doc false
  # On a shard's node: the index `holder` holds replaced by
  # `f(that index, a...)` (made here, in the bounded call, not in the
  # holder); the size of the new one, or {:error, :enomem}. The holder
  # takes it only if it still holds the value this call changed
  # (Shard.swap_value/3): else (another change came first) it is made
  # again on the newer value.
  def update_held(holder, f, a) do
    old = GenServer.call(holder, :index, :infinity)

    case apply(__MODULE__, f, [old | a]) do
      {:error, _} = error ->
        error

      ^old ->
        old.size

      new ->
        case Shard.swap_value(holder, old, new) do
          :ok -> new.size
          :changed -> update_held(holder, f, a)
        end
    end
  end

  @doc false
  # the candidates as scored, in order (a shard's part of cdist/3)
  @spec scored_texts(t()) :: [binary()]
  def scored_texts(%__MODULE__{segments: segments}), do: Segment.scored(segments)

  @doc """
  The index a binary of `dump/1` holds, packed natively again (with
  `nodes:` and `timeout:`, split over nodes as `new/2` does).

  Every way of loading, here or split over nodes, reads the binary
  through the same checks, all of them before anything is built or any
  node is asked:

    * its size: at most `max_bytes:` bytes (default 256 MiB, `:infinity`
      for no limit) of external term format once uncompressed. A dump is
      compressed, and the size its header gives is checked before
      anything is inflated, so a small binary cannot expand past the
      limit. Decoding takes a few times that size on the calling
      process's heap;
    * a term as `dump/1` writes it, decoded with `:safe` (the atoms in its
      keys must exist on this node, and on the nodes taking its shards),
      with nothing after it;
    * its segments: a proper list, each of as many keys as texts (and as
      scored texts), in proper lists, the texts binaries;
    * its next key (the one the next candidate added without a key gets):
      an integer in 0..2^63, above every integer key it holds in
      0..2^63-1 (the keys an index gives), so that an addition never
      gives an entry's key again. A dump written before version 2 of the
      format has its next key raised above those keys instead.

  A binary that fails one raises `ArgumentError` naming `load/2`, its
  first argument and what is wrong. Returns `{:error, :enomem}` when
  native memory runs out, `{:error, {reason, node}}` when a node does not
  take its shard.
  """
  @spec load(binary(), keyword()) :: t() | {:error, :enomem | {atom() | tuple(), node()}}
  def load(binary, opts \\ [])

  def load(binary, opts) when is_binary(binary) and is_list(opts) do
    for option <- opts, not match?({key, _} when key in @load_options, option) do
      Options.bad_option!(@load, option, @load_options, opts)
    end

    max_bytes = Dump.max_bytes!(opts)
    settings = Distributed.options(@load, Keyword.take(opts, [:nodes, :timeout]))
    {processor, next, rows} = Dump.decode!(binary, max_bytes)

    case settings.nodes do
      nil -> load_here(processor, next, rows)
      nodes -> load_split(processor, next, rows, nodes, settings.timeout)
    end
  end

  def load(binary, opts) when is_binary(binary), do: Options.not_keyword!(@load, opts)

  def load(other, _opts),
    do: Options.invalid!(@load, "first argument", other, "a binary made by dump/1")

  # the rows of a checked dump, a segment each (none for a row of no
  # entries: a node's share of a small index)
  defp load_here(processor, next, rows) do
    rows
    |> Enum.reduce_while({[], 0}, fn {keys, texts, scored}, {segments, size} ->
      case Segment.new(texts, scored || texts, keys, Segment.build(true)) do
        {:ok, nil} -> {:cont, {segments, size}}
        {:ok, s} -> {:cont, {[s | segments], size + s.count}}
        {:error, _} = error -> {:halt, error}
      end
    end)
    |> case do
      {:error, _} = error ->
        error

      {segments, size} ->
        segments = Enum.reverse(segments)
        %__MODULE__{segments: segments, size: size, next: next, processor: processor}
    end
  end

  # the entries of a checked dump split over `nodes`: each node loads its
  # share (a dump of its own, with the index's next) through the same checks
  defp load_split(processor, next, rows, nodes, timeout) do
    entries =
      Enum.flat_map(rows, fn {keys, texts, scored} -> Enum.zip([keys, texts, scored || texts]) end)

    count = length(entries)
    chunks = Distributed.split(entries, count, nodes)

    start = fn chunk, _first ->
      {keys, texts, scored} = unzip3(chunk)
      scored = if scored == texts, do: nil, else: scored
      part = Dump.encode(processor, next, [{keys, texts, scored}])
      {Shard, :start_value, [self(), __MODULE__, :load, [part, [max_bytes: :infinity]]]}
    end

    case Distributed.hold(nodes, chunks, timeout, start) do
      {:ok, shards} ->
        %__MODULE__{
          segments: [],
          shards: shards,
          size: count,
          next: next,
          processor: processor,
          timeout: timeout
        }

      {:error, _} = error ->
        error
    end
  end

  defp unzip3(triples) do
    {a, b, c} =
      Enum.reduce(Enum.reverse(triples), {[], [], []}, fn {x, y, z}, {xs, ys, zs} ->
        {[x | xs], [y | ys], [z | zs]}
      end)

    {a, b, c}
  end

  # the keys of `count` entries as a list ({:positions, first}: first,
  # first + 1, ...)
  defp key_list({:positions, first}, count), do: Enum.to_list(first..(first + count - 1)//1)
  defp key_list(keys, _count), do: keys

  # the index's next key after `count` entries with `keys` came in
  defp next_after(next, {:positions, first}, count),
    do: min(max(next, first) + count, Dump.key_limit())

  defp next_after(next, keys, count), do: Dump.next_after(next, keys, count)

  # the texts and keys of choices (for binaries, positions from `next`, or
  # from above the integer keys given beside them)
  # (WellBehaved.Fuzzy.Choices: a nil skipped, a map's entries in the
  # order of their keys)
  defp entries!(name, choices, _next) when is_map(choices), do: Choices.of_map(name, choices)

  defp entries!(name, choices, next) when is_list(choices) do
    first = Dump.first_position(next, choices)

    case binaries(choices, 0) do
      # binaries alone: their keys are consecutive positions, no list of them
      count when is_integer(count) ->
        if count > 0, do: Dump.position!(name, first + count - 1)
        {choices, {:positions, first}}

      :mixed ->
        keyed_entries!(name, choices, first)
    end
  end

  defp entries!(name, other, _next),
    do: Options.invalid!(name, "choices", other, "a list of binaries or {key, binary}, or a map")

  # the length of a list of binaries, or :mixed
  defp binaries([text | rest], count) when is_binary(text), do: binaries(rest, count + 1)
  defp binaries([], count), do: count
  defp binaries(_other, _count), do: :mixed

  defp keyed_entries!(name, choices, first),
    do: Choices.of_list(name, choices, &Dump.position!(name, first + &1))

  defp check_processor!(_name, p) when p in [nil, :default, :fold] or is_function(p, 1), do: p

  defp check_processor!(name, p),
    do:
      Options.invalid!(name, :processor, p, "nil, :default, :fold or a function of one argument")

  defimpl Enumerable do
    def count(index), do: {:ok, index.size}
    def member?(_index, _element), do: {:error, __MODULE__}
    def slice(_index), do: {:error, __MODULE__}

    def reduce(%{shards: [_ | _]} = index, acc, fun) do
      index
      |> WellBehaved.Fuzzy.Index.held(
        "Enumerable.reduce/3 of a Fuzzy.Index",
        {Enum, :to_list, []}
      )
      |> Enum.concat()
      |> Enumerable.reduce(acc, fun)
    end

    def reduce(index, acc, fun) do
      index.segments
      |> Stream.flat_map(&WellBehaved.Fuzzy.Index.Segment.pairs/1)
      |> Enumerable.reduce(acc, fun)
    end
  end
end
