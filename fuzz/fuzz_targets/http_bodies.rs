//! The API's request bodies through the router in process (see kibitz_fuzz::http).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kibitz_fuzz::http::request(data));
