//! The term wrappers against the SDK's server erl_nif (linked into this
//! crate's tests by its build script): what a wrapper makes, another reads
//! back, and each refuses what it should.
use crate::sys;
use crate::{Env, Error, OwnedBinary};

/// Runs `f` with an environment of its own.
fn with_env(f: impl FnOnce(Env<'_>)) {
    unsafe {
        let raw = sys::enif_alloc_env();
        assert!(!raw.is_null());
        f(Env::from_raw(raw));
        sys::enif_free_env(raw);
    }
}

#[test]
fn integers_round_trip_and_refuse_what_does_not_fit() {
    with_env(|env| {
        for v in [0u64, 1, 255, u32::MAX as u64, u32::MAX as u64 + 1, u64::MAX] {
            assert_eq!(env.u64(v).decode_u64(), Ok(v));
        }
        for v in [i64::MIN, -1, 0, 1, i64::MAX] {
            assert_eq!(env.i64(v).decode_i64(), Ok(v));
        }
        assert_eq!(env.i64(-1).decode_u64(), Err(Error::BadArg));
        assert_eq!(env.u64(u64::MAX).decode_i64(), Err(Error::BadArg));
        assert_eq!(
            env.u64(u32::MAX as u64 + 1).decode_u32(),
            Err(Error::BadArg)
        );
        assert_eq!(env.u64(u32::MAX as u64).decode_u32(), Ok(u32::MAX));
        assert_eq!(
            env.i64(i32::MIN as i64 - 1).decode_i32(),
            Err(Error::BadArg)
        );
        assert_eq!(env.i64(-7).decode_i32(), Ok(-7));
        assert_eq!(env.u64(7).decode_usize(), Ok(7));
        assert_eq!(env.atom("seven").decode_u64(), Err(Error::BadArg));
        assert_eq!(env.f64(7.0).unwrap().decode_u64(), Err(Error::BadArg));
    });
}

#[test]
fn floats_round_trip_and_an_integer_is_no_float() {
    with_env(|env| {
        for v in [0.0, -0.5, 1e300, f64::MIN_POSITIVE] {
            assert_eq!(env.f64(v).unwrap().decode_f64(), Ok(v));
        }
        assert!(env.f64(f64::NAN).is_err());
        assert!(env.f64(f64::INFINITY).is_err());
        assert_eq!(env.u64(1).decode_f64(), Err(Error::BadArg));
    });
}

#[test]
fn atoms_and_booleans() {
    with_env(|env| {
        assert_eq!(env.atom("hello").decode_atom(), Ok("hello".to_string()));
        assert_eq!(env.atom("").decode_atom(), Ok(String::new()));
        assert!(env.atom("hello").is_atom("hello"));
        assert!(!env.atom("hello").is_atom("hell"));
        assert!(!env.binary(b"hello").is_atom("hello"));
        assert_eq!(env.bool(true).decode_bool(), Ok(true));
        assert_eq!(env.bool(false).decode_bool(), Ok(false));
        assert_eq!(env.atom("nil").decode_bool(), Err(Error::BadArg));
        assert_eq!(env.u64(1).decode_atom(), Err(Error::BadArg));
    });
}

#[test]
fn binaries_and_iodata() {
    with_env(|env| {
        let bytes: Vec<u8> = (0..=255).collect();
        let term = env.binary(&bytes);
        assert_eq!(term.decode_bytes().unwrap().as_slice(), &bytes[..]);
        let empty = env.binary(b"");
        assert!(empty.decode_bytes().unwrap().is_empty());
        assert_eq!(empty.decode_bytes().unwrap().as_slice(), b"");
        assert_eq!(env.u64(1).decode_bytes().err(), Some(Error::BadArg));
        // iodata: nested lists of bytes and binaries, flattened
        let io = env.list(&[
            env.u64(b'a' as u64),
            env.list(&[env.binary(b"bc")]),
            env.binary(b"d"),
        ]);
        assert_eq!(io.decode_iodata().unwrap().as_slice(), b"abcd");
        assert!(io.decode_bytes().is_err());
        assert!(env.list(&[env.u64(256)]).decode_iodata().is_err());
    });
}

#[test]
fn lists_and_tuples() {
    with_env(|env| {
        let items = [env.u64(1), env.atom("two"), env.binary(b"3")];
        let list = env.list(&items).decode_list().unwrap();
        assert_eq!(list.len(), 3);
        assert_eq!(list[0].decode_u64(), Ok(1));
        assert!(list[1].is_atom("two"));
        assert_eq!(list[2].decode_bytes().unwrap().as_slice(), b"3");
        let tuple = env.tuple(&items).decode_tuple().unwrap();
        assert_eq!(tuple.len(), 3);
        assert!(tuple[1].is_atom("two"));
        assert!(env.list(&[]).decode_list().unwrap().is_empty());
        assert!(env.tuple(&[]).decode_tuple().unwrap().is_empty());
        assert!(env.tuple(&items).decode_list().is_err());
        assert!(env.list(&items).decode_tuple().is_err());
        let ok = env.ok(env.u64(5)).decode_tuple().unwrap();
        assert!(ok[0].is_atom("ok"));
        assert_eq!(ok[1].decode_u64(), Ok(5));
        let error = env.error(env.atom("why")).decode_tuple().unwrap();
        assert!(error[0].is_atom("error") && error[1].is_atom("why"));
    });
}

#[test]
fn owned_binaries_are_filled_then_handed_over() {
    with_env(|env| {
        let mut bin = OwnedBinary::new(5).unwrap();
        assert_eq!(bin.as_slice(), &[0; 5]);
        bin.as_mut_slice().copy_from_slice(b"hello");
        let term = bin.into_term(env);
        assert_eq!(term.decode_bytes().unwrap().as_slice(), b"hello");
        // dropped without a term: released
        drop(OwnedBinary::new(1000).unwrap());
        assert_eq!(
            OwnedBinary::new(0)
                .unwrap()
                .into_term(env)
                .decode_bytes()
                .unwrap()
                .len(),
            0
        );
    });
}

#[test]
fn errors_carry_their_reason() {
    with_env(|env| {
        let why = env.atom("too_big");
        let e = Error::reason(why);
        assert!(e.term(env) == why.as_raw());
        assert!(unsafe { crate::Term::from_raw(env, Error::BadArg.term(env)) }.is_atom("badarg"));
    });
}

#[test]
fn limits_match_the_header() {
    let header = include_str!("../../../c_src/include/wb_runtime.h");
    assert!(header.contains(&format!(
        "#define WB_MAX_JOB_ARGS  {}",
        sys::WB_MAX_JOB_ARGS
    )));
    assert!(header.contains(&format!(
        "#define WB_MAX_ARGS_SIZE {}",
        sys::WB_MAX_ARGS_SIZE
    )));
    assert!(header.contains(&format!(
        "#define WB_SDK_VERSION_STRING \"{}\"",
        sys::WB_SDK_VERSION_STRING
    )));
    assert_eq!(sys::WB_SDK_VERSION_STRING, env!("CARGO_PKG_VERSION"));
}
