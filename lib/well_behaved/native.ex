defmodule WellBehaved.Native do
  @moduledoc false
  # The stub module of priv/well_behaved_nif (c_src/nif/well_behaved_nif.c),
  # declared as any SDK library's is. Arguments are not checked here: call
  # the public modules (WellBehaved.Levenshtein, WellBehaved.Fuzzy,
  # WellBehaved.File, WellBehaved.Runtime), which validate them.
  #
  # Job NIFs (jobs:) take their own arguments, then the schedule mode, the
  # tiny slice flag and a reference that tags the reply of a threaded job
  # (WellBehaved.Job.call/4 adds them):
  #
  #   levenshtein(a, b, unit, max_distance)
  #   search(query, candidates, count, unit, max, limit)
  #   search_index(packed, count)
  #   search_sorted(packed, count): the candidates of a packed list with
  #     their tokens sorted, :same (each is its own) or {sorted, count}
  #   fuzzy_score(a, b, unit, options): a float, an integer for an edit
  #     distance's own kinds (the worst of its kind beyond the cutoff)
  #   fuzzy_search(query, packed, count, unit, options, limit): the best
  #     candidates, a binary of <<index::64-native, score::float-64-native>>
  #     (the integer kinds: <<index::64-native, score::64-native>>)
  #   fuzzy_cdist_row(query, packed, count, unit, options, matrix, row): a
  #     row of cdist written into the matrix (:ok)
  #   fuzzy_editops(a, b, unit, metric): {width, length_a, length_b, ops},
  #     the edit script of a into b (their lengths in units), a binary of <<type, src::width-unit(8)-native,
  #     dest::width-unit(8)-native>> records (WellBehaved.Fuzzy.Edits)
  #   the fuzzy jobs: {:error, {:does_not_fit, :u64 | :u32, ...}} for a
  #   score past its type
  #
  # Other NIFs (nifs:):
  #
  #   levenshtein_short(a, b, unit, max_distance): the distance of a pair
  #     of at most 512 bytes in all whose shorter side fits a word once
  #     common affixes go, or whose cutoff is at most 3 (ASCII for
  #     :codepoint), computed in the call (under 2 us); :long for any
  #     other pair, which then runs as a job
  #   levenshtein_paths(): {pair_columns, lanes}, the paths this CPU
  #     computes with (atoms)
  #   pack_new(count), pack_more(packed, list): a list of binaries copied
  #     into native memory, a slice of it per call
  #   pack_release(packed): a packed list searched for the last time, its
  #     memory back now, kept for the next list packed (:ok; nothing while
  #     a job or result reads it)
  #   pack_keep(packed): a packed list whose bytes binaries may share from
  #     now on (:ok); pack_slice(packed, from, count) and
  #     pack_pick(packed, positions): its candidates from..from+count-1, or
  #     those at the positions, as binaries over its memory (no copy), at
  #     most 4096 a call
  #   pack_ascii(packed): whether a sealed packed list's bytes are all
  #     ASCII (found when packed)
  #   pack_hash(packed): a kept packed list's candidates hashed by their
  #     bytes, a slice of the work per call (:more, :done,
  #     {:error, :enomem}); pack_find(packed, keys): the positions of its
  #     candidates equal to one of at most 4096 binaries
  #   hits_more(hits, list): a long result of nearest, {:hits, hits, n}
  #     from search, made into the list a slice at a time
  #   distances_more(distances, count, list): a long result of distances
  #     (a binary of native 32-bit words), its first count made into the
  #     list a slice at a time, {:more, left, list} or {:done, list}
  #   fuzzy_score_short(a, b, unit, options): a pair of at most 64 bytes a
  #     side and about a microsecond of work scored in the call, :long for
  #     any other (then the job's)
  #   fuzzy_matrix_new(rows, cols, width), fuzzy_matrix_binary(matrix):
  #     cdist's matrix, rows x cols cells of width bytes that the row jobs
  #     write into, and its cells as one binary (no copy)
  #   fuzzy_default_process(binary): the default processor natively for
  #     ASCII of up to 64 KiB; :other for any other binary
  #   fuzzy_fold(binary, from): the folding processor natively, about 64
  #     KiB from `from` a call: {folded, next} (trimmed when whole), or
  #     :other for text the native table lacks (then Elixir's)
  #   fuzzy_graphemes_scan(binary, from): whether the text is one
  #     codepoint a grapheme cluster, about 64 KiB from `from` a call:
  #     :single, :clusters, :invalid (UTF-8) or {:more, next}
  #   fuzzy_names(): {scorers, kinds, most prefix weight}, the atoms the
  #     native side knows, in its order, and the largest prefix_weight
  #   file_*: WellBehaved.File's NIFs; the normal ones answer :refill
  #     (reads) or :flush (writes) when they need the dirty variant
  #
  # runtime_stats/0 and runtime_configure/4 come with use WellBehaved.NIF.

  use WellBehaved.NIF,
    otp_app: :well_behaved,
    library: "well_behaved_nif",
    jobs: [
      levenshtein: 4,
      search: 6,
      search_index: 2,
      search_sorted: 2,
      fuzzy_score: 4,
      fuzzy_search: 6,
      fuzzy_cdist_row: 7,
      fuzzy_editops: 4
    ],
    nifs: [
      levenshtein_short: 4,
      levenshtein_paths: 0,
      pack_new: 1,
      pack_more: 2,
      pack_release: 1,
      pack_keep: 1,
      pack_slice: 3,
      pack_pick: 2,
      pack_ascii: 1,
      pack_hash: 1,
      pack_find: 2,
      hits_more: 2,
      distances_more: 3,
      fuzzy_score_short: 4,
      fuzzy_matrix_new: 3,
      fuzzy_matrix_binary: 1,
      fuzzy_default_process: 1,
      fuzzy_fold: 2,
      fuzzy_graphemes_scan: 2,
      fuzzy_names: 0,
      file_open: 5,
      file_read_line: 1,
      file_read_line_dirty: 1,
      file_read_lines: 2,
      file_read_lines_dirty: 2,
      file_read: 2,
      file_read_dirty: 2,
      file_write: 2,
      file_write_dirty: 2,
      file_flush: 1,
      file_sync: 1,
      file_close: 1
    ]
end
