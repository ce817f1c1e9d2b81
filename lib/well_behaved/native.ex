defmodule WellBehaved.Native do
  @moduledoc false
  # The NIF stubs, replaced when priv/well_behaved_nif.so loads. Arguments
  # are not checked here: call the public modules (WellBehaved.Levenshtein,
  # WellBehaved.File, WellBehaved.Runtime), which validate them.
  #
  # Every job NIF takes its own arguments, then the schedule mode, the tiny
  # slice flag and a reference that tags the reply of a threaded job
  # (WellBehaved.Job.call/4 adds them).

  @on_load :load_nif

  def load_nif do
    path = :filename.join(:code.priv_dir(:well_behaved), ~c"well_behaved_nif")
    :erlang.load_nif(path, load_info())
  end

  # the slice derived from this VM's Erlang turn; 0 (the runtime's default)
  # while the library itself compiles and the calibration is not built yet
  defp load_info do
    if Code.ensure_loaded?(WellBehaved.Runtime.Calibration),
      do: WellBehaved.Runtime.Calibration.load_info(),
      else: 0
  end

  def levenshtein(_a, _b, _unit, _max_distance, _mode, _tiny, _ref), do: stub()
  # the distance of a pair of at most 512 bytes in all whose shorter side
  # fits a word once common affixes go, or whose cutoff is at most 3 (ASCII
  # for :codepoint), computed in the call (under 2 us); :long for any other
  # pair, which then runs as a job
  def levenshtein_short(_a, _b, _unit, _max_distance), do: stub()
  # {pair_columns, lanes}: the paths this CPU computes with (atoms)
  def levenshtein_paths, do: stub()
  def search(_query, _candidates, _count, _unit, _max, _limit, _mode, _tiny, _ref), do: stub()
  def search_index(_packed, _count, _mode, _tiny, _ref), do: stub()
  # the candidates of a packed list with their tokens sorted: :same (each
  # is its own), or {sorted, count}, an index of their own
  def search_sorted(_packed, _count, _mode, _tiny, _ref), do: stub()
  # a list of binaries copied into native memory, a slice of it per call
  def pack_new(_count), do: stub()
  def pack_more(_packed, _list), do: stub()
  # a packed list searched for the last time: its memory back now, kept
  # for the next list packed (:ok; nothing while a job or result reads it)
  def pack_release(_packed), do: stub()
  # a packed list whose bytes binaries may share from now on (:ok); its
  # candidates from..from+count-1, or those at the given positions, as
  # binaries over its memory (no copy), at most 4096 a call
  def pack_keep(_packed), do: stub()
  def pack_slice(_packed, _from, _count), do: stub()
  def pack_pick(_packed, _positions), do: stub()
  # whether a sealed packed list's bytes are all ASCII (found when packed)
  def pack_ascii(_packed), do: stub()
  # a kept packed list's candidates hashed by their bytes, a slice of the
  # work per call (:more, :done, {:error, :enomem}); then the positions
  # of its candidates equal to one of at most 4096 binaries
  def pack_hash(_packed), do: stub()
  def pack_find(_packed, _keys), do: stub()
  # a long result of nearest: {:hits, hits, n} from search, made into the
  # list a slice at a time
  def hits_more(_hits, _list), do: stub()
  # a long result of distances (a binary of native 32-bit words): its first
  # count made into the list a slice at a time, {:more, left, list} or
  # {:done, list}
  def distances_more(_distances, _count, _list), do: stub()
  # WellBehaved.Fuzzy: a score of two binaries (a float, an integer for an
  # edit distance's own kinds; the worst of its kind beyond the cutoff);
  # the best candidates of a packed list, as a binary of
  # <<index::64-native, score::float-64-native>> (the integer kinds:
  # <<index::64-native, score::64-native>>); a row of cdist written into
  # the matrix (:ok);
  # {:error, {:does_not_fit, :u64 | :u32, ...}} for a score past its type
  def fuzzy_score(_a, _b, _unit, _options, _mode, _tiny, _ref), do: stub()
  # a pair of at most 64 bytes a side and about a microsecond of work
  # scored in the call, :long for any other (then the job's)
  def fuzzy_score_short(_a, _b, _unit, _options), do: stub()

  def fuzzy_search(_query, _packed, _count, _unit, _options, _limit, _mode, _tiny, _ref),
    do: stub()

  def fuzzy_cdist_row(
        _query,
        _packed,
        _count,
        _unit,
        _options,
        _matrix,
        _row,
        _mode,
        _tiny,
        _ref
      ),
      do: stub()

  # cdist's matrix: rows x cols cells of width bytes that the row jobs
  # write into (fuzzy_cdist_row's matrix and row), and its
  # cells as one binary (no copy)
  def fuzzy_matrix_new(_rows, _cols, _width), do: stub()
  def fuzzy_matrix_binary(_matrix), do: stub()
  # the default processor natively for ASCII of up to 64 KiB; :other for
  # any other binary
  def fuzzy_default_process(_binary), do: stub()
  # {scorers, kinds, most prefix weight}: the atoms the native side knows,
  # in its order, and the largest prefix_weight it takes
  def fuzzy_names, do: stub()
  def runtime_stats, do: stub()

  def runtime_configure(_normal_max_us, _yielding_max_us, _slice_us, _dirty_slice_us),
    do: stub()

  # WellBehaved.File: normal NIFs answer :refill (reads) or :flush (writes)
  # when they need the dirty variant
  def file_open(_path, _mode, _flags, _buffer_bytes, _max_line), do: stub()
  def file_read_line(_file), do: stub()
  def file_read_line_dirty(_file), do: stub()
  def file_read_lines(_file, _max), do: stub()
  def file_read_lines_dirty(_file, _max), do: stub()
  def file_read(_file, _bytes), do: stub()
  def file_read_dirty(_file, _bytes), do: stub()
  def file_write(_file, _iodata), do: stub()
  def file_write_dirty(_file, _iodata), do: stub()
  def file_flush(_file), do: stub()
  def file_sync(_file), do: stub()
  def file_close(_file), do: stub()

  defp stub, do: :erlang.nif_error(:nif_not_loaded)
end
