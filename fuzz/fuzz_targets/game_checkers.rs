//! The checkers notations (positions and moves in every format, round trips) and game records.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kibitz_fuzz::game::<kibitz::games::checkers::Checkers>(data));
