//! The one cron form Herald takes, for scheduled flows and monitors alike: five fields (minute,
//! hour, day of month, month, day of week), read in UTC. The parser underneath (croner) also
//! takes a seconds field, a year field and nicknames such as `@yearly`; none of those is
//! documented, so none is accepted. Five fields cannot say "more often than once a minute":
//! that is the shortest interval a schedule can have.

/// `text` as a five-field cron expression, or what is wrong with it (the message names it).
pub fn parse(text: &str) -> Result<croner::Cron, String> {
    let fields = text.split_whitespace().count();
    if text.trim_start().starts_with('@') {
        return Err(format!(
            "schedule '{text}' is a nickname; write the five fields instead (minute hour day month weekday, UTC; '0 0 1 1 *' for yearly)"
        ));
    }
    if fields != 5 {
        return Err(format!(
            "schedule '{text}' has {fields} fields; a schedule has five (minute hour day month weekday, UTC), so it fires at most once a minute"
        ));
    }
    text.parse::<croner::Cron>()
        .map_err(|e| format!("schedule '{text}' is not a cron expression (minute hour day month weekday, UTC): {e}"))
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn only_five_fields_are_taken() {
        assert!(parse("0 9 * * 1").is_ok());
        assert!(parse("*/5 * * * *").is_ok());
        for (text, says) in [
            ("* * * * * *", "has 6 fields"),
            ("0 0 9 * * 1 2030", "has 7 fields"),
            ("@yearly", "nickname"),
            ("* * * *", "has 4 fields"),
            ("", "has 0 fields"),
            ("61 * * * *", "not a cron expression"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
