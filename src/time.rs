//! Wall-clock helpers without a date library: UTC civil dates from
//! milliseconds since the epoch, for timestamps people read, and back.

/// Days since 1970-01-01 → (year, month 1–12, day 1–31), proleptic Gregorian.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // Howard Hinnant's days-to-civil algorithm, eras of 400 years.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// (year, month 1–12, day 1–31) → days since 1970-01-01: the inverse of
/// [`civil_from_days`].
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = year - i64::from(month <= 2);
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let mp = i64::from(if month > 2 { month - 3 } else { month + 9 });
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DDTHH:MM:SSZ` (UTC), with `.mmm` before the `Z` when the
/// timestamp is not a whole second: exact, and read back by
/// [`parse_utc_datetime`].
pub fn utc_datetime_exact(ms: i64) -> String {
    let datetime = utc_datetime(ms);
    match ms.rem_euclid(1000) {
        0 => datetime,
        frac => format!("{}.{frac:03}Z", &datetime[..datetime.len() - 1]),
    }
}

/// The millisecond timestamp of `YYYY-MM-DDTHH:MM:SSZ` or
/// `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC, a year of four digits), as
/// [`utc_datetime_exact`] writes it; `None` for any other text or a date
/// or time that does not exist.
pub fn parse_utc_datetime(text: &str) -> Option<i64> {
    let text = text.strip_suffix('Z')?;
    let (whole, frac) = match text.split_once('.') {
        Some((whole, frac)) if frac.len() == 3 => (whole, frac),
        Some(_) => return None,
        None => (text, "000"),
    };
    let b = whole.as_bytes();
    if b.len() != 19 || (b[4], b[7], b[10], b[13], b[16]) != (b'-', b'-', b'T', b':', b':') {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let digits = whole.get(range)?;
        digits
            .bytes()
            .all(|d| d.is_ascii_digit())
            .then(|| digits.parse().ok())?
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let frac: i64 = frac
        .bytes()
        .all(|d| d.is_ascii_digit())
        .then(|| frac.parse().ok())??;
    let (month, day) = (u32::try_from(month).ok()?, u32::try_from(day).ok()?);
    let days = days_from_civil(year, month, day);
    if civil_from_days(days) != (year, month, day) || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    Some((days * 86_400 + hour * 3600 + minute * 60 + second) * 1000 + frac)
}

/// `YYYY-MM-DD` (UTC) of a millisecond timestamp.
pub fn utc_date(ms: i64) -> String {
    let (y, m, d) = civil_from_days(ms.div_euclid(86_400_000));
    format!("{y:04}-{m:02}-{d:02}")
}

/// `YYYY-MM-DDTHH:MM:SSZ` (UTC) of a millisecond timestamp.
pub fn utc_datetime(ms: i64) -> String {
    let secs = ms.div_euclid(1000).rem_euclid(86_400);
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        utc_date(ms),
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// `YYYYMMDDTHHMMSSZ` (ISO 8601 basic format) of a millisecond timestamp:
/// sorts by time and is safe in a file name on every platform (no `:`).
#[cfg_attr(not(feature = "cli"), expect(dead_code))]
pub fn utc_stamp(ms: i64) -> String {
    utc_datetime(ms).replace(['-', ':'], "")
}

/// Milliseconds since the epoch, from the system clock.
#[cfg_attr(not(feature = "cli"), expect(dead_code))]
pub fn system_now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_datetime(1_764_441_600_000), "2025-11-29T18:40:00Z");
        assert_eq!(utc_date(951_782_400_000), "2000-02-29");
        assert_eq!(utc_date(-86_400_000), "1969-12-31");
        assert_eq!(utc_datetime(1_798_761_599_999), "2026-12-31T23:59:59Z");
        assert_eq!(utc_date(4_107_542_400_000), "2100-03-01");
    }

    #[test]
    fn exact_datetimes_read_back() {
        for ms in [
            0,
            1_764_441_600_000,
            1_764_441_600_007,
            951_782_400_999,
            4_107_542_399_500,
        ] {
            assert_eq!(
                parse_utc_datetime(&utc_datetime_exact(ms)),
                Some(ms),
                "{ms}"
            );
        }
        assert_eq!(
            utc_datetime_exact(1_764_441_600_007),
            "2025-11-29T18:40:00.007Z"
        );
        assert_eq!(
            utc_datetime_exact(1_764_441_600_000),
            "2025-11-29T18:40:00Z"
        );
        for bad in [
            "2025-11-29T18:40:00",
            "2025-02-29T18:40:00Z",
            "2025-11-29T24:00:00Z",
            "2025-11-29 18:40:00Z",
            "2025-11-29T18:40:00.7Z",
            "+025-11-29T18:40:00Z",
            "2025-1-129T18:40:00Z",
            "",
        ] {
            assert_eq!(parse_utc_datetime(bad), None, "{bad}");
        }
    }

    #[test]
    fn days_from_civil_inverts_civil_from_days() {
        for days in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn stamps_sort_and_suit_file_names() {
        assert_eq!(utc_stamp(1_795_978_567_999), "20261129T185607Z");
        assert_eq!(utc_stamp(-1), "19691231T235959Z");
    }

    #[test]
    fn every_day_of_four_centuries_follows_the_previous_one() {
        let start = -25_567; // 1900-01-01
        let mut previous = civil_from_days(start - 1);
        assert_eq!(previous, (1899, 12, 31));
        for days in start..start + 146_097 {
            let current = civil_from_days(days);
            let (y, m, d) = previous;
            let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
            let length = match m {
                2 if leap => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            let expected = if d < length {
                (y, m, d + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
            assert_eq!(current, expected, "day {days}");
            previous = current;
        }
    }

    #[test]
    fn yesterday_crosses_month_and_year() {
        let jan_first_2027 = 1_798_761_600_000;
        assert_eq!(utc_date(jan_first_2027 - 86_400_000), "2026-12-31");
        let march_first_2028 = jan_first_2027 + (365 + 31 + 29) * 86_400_000;
        assert_eq!(utc_date(march_first_2028), "2028-03-01");
        assert_eq!(utc_date(march_first_2028 - 86_400_000), "2028-02-29");
    }
}
