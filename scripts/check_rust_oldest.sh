#!/usr/bin/env bash
# The crates promise Rust 1.63 (rust-version), Debian bookworm's: this
# builds them with that compiler, unpacked from Debian's packages into
# DIR (default c_src/build/rust163) without installing anything, so a
# newer feature slipping in fails here and not on a user's machine. Where
# the packages cannot be downloaded (no network, no apt), it says so and
# checks nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(realpath -m "${1:-c_src/build/rust163}")
root=$dir/root
if [ ! -x "$root/usr/bin/cargo" ]; then
  mkdir -p "$dir/debs"
  # cargo also links libgit2 and its libraries, which bookworm does not
  # install by default
  if ! (cd "$dir/debs" && apt-get download -q cargo rustc libstd-rust-1.63 libstd-rust-dev \
      libgit2-1.5 libhttp-parser2.9 libmbedtls14 libmbedx509-1 libmbedcrypto7 >/dev/null 2>&1); then
    echo "Rust 1.63 is not checked: Debian's rustc 1.63 packages could not be downloaded"
    exit 0
  fi
  for deb in "$dir"/debs/*.deb; do dpkg -x "$deb" "$root"; done
fi
export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export RUSTC=$root/usr/bin/rustc RUSTDOC=$root/usr/bin/rustdoc CARGO_HOME=$dir/cargo-home
export CARGO_TARGET_DIR=$dir/target CARGO_NET_OFFLINE=true
cargo=$root/usr/bin/cargo
echo "$("$RUSTC" --version): the crates, the example and the lab's crate"
"$cargo" test --offline --quiet --manifest-path rust/well_behaved/Cargo.toml
for crate in rust/test_jobs examples/hash_sort/native/hash_sort lab/native/lab_rs; do
  "$cargo" build --offline --quiet --release --manifest-path "$crate/Cargo.toml"
done
echo "Rust 1.63: the crates build and the crate's tests pass"
