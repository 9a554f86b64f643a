//! The PROXY protocol header's parsers and its reader on a loopback connection (see kibitz_fuzz::proxy).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kibitz_fuzz::proxy::input(data));
