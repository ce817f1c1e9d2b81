//! Elixir.HashSort.Native: two jobs on the WellBehaved runtime, written
//! once and run in whichever mode the caller picks, or in a server
//! program (`hash_sort_server`) for `schedule: :external`.
//!
//! - `sha256(data)`: the SHA-256 digest of a binary, a 64-byte block per
//!   unit of work.
//! - `sort_u32(data)`: the 32-bit big-endian integers of a binary, sorted
//!   by a merge sort done in steps, an element moved per unit.
mod sha256;
mod sort;

pub use sha256::Sha256;
pub use sort::SortU32;

well_behaved::nif_init! {
    module: "Elixir.HashSort.Native",
    jobs: { sha256: Sha256, sort_u32: SortU32 },
}
