//! The CEBoard engine's calls against a recording host (see kibitz_fuzz::ceboard).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kibitz_fuzz::ceboard::calls(data));
