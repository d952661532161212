//! Feeds arbitrary UTF-8 to the shell splitter and the dangerous-command classifier.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = hermes_tools::approval::parse::parse(text);
        let _ = hermes_tools::approval::classify(text);
    }
});
