//! A GUIDE session: input bytes in, answer lines out (see kibitz_fuzz::sessions).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kibitz_fuzz::sessions::guide(data));
