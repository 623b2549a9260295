//! UTC calendar dates and times from the injected clock (milliseconds since
//! the Unix epoch), without a date library: the memory files are named by
//! day and backups are stamped to the second, which is all we need.

const MS_PER_DAY: i64 = 86_400_000;

/// A UTC instant broken into calendar fields, to the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct UtcTime {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

impl UtcTime {
    /// The calendar fields of `now_ms`. Negative values (before 1970) work
    /// too: the day is found with floor division, not truncation.
    pub fn from_ms(now_ms: i64) -> UtcTime {
        let days = now_ms.div_euclid(MS_PER_DAY);
        let secs_of_day = now_ms.rem_euclid(MS_PER_DAY) / 1000;
        let (year, month, day) = civil_from_days(days);
        UtcTime {
            year,
            month,
            day,
            // Below 86_400, so every field fits in u32.
            hour: (secs_of_day / 3600) as u32,
            minute: (secs_of_day / 60 % 60) as u32,
            second: (secs_of_day % 60) as u32,
        }
    }

    /// `YYYYMMDDTHHMMSSZ` (ISO 8601 basic format): sorts by time and is safe
    /// in a file name on every platform (no `:`).
    pub fn stamp(&self) -> String {
        format!(
            "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// `YYYY-MM-DD` of the UTC day `offset_days` away from the day of `now_ms`
/// (`-1` is yesterday).
pub(crate) fn date_string(now_ms: i64, offset_days: i64) -> String {
    let days = now_ms.div_euclid(MS_PER_DAY) + offset_days;
    let (year, month, day) = civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The proleptic Gregorian `(year, month, day)` of a day count from
/// 1970-01-01. The calendar repeats every 400 years (146,097 days), so the
/// day is placed in a 400-year era whose years start on March 1st: that puts
/// the leap day at the end of the year, where it needs no special case.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // Shift the epoch from 1970-01-01 to 0000-03-01.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    // 0..=146_096
    let day_of_era = z.rem_euclid(146_097);
    // 0..=399: the leap days so far are taken out before dividing by 365.
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    // 0..=365, counted from March 1st.
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // 0..=11, 0 = March: months of 31, 30, 31, 30, 31 days repeat, 153 days per five.
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = MS_PER_DAY;

    #[test]
    fn epoch_and_known_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        // `date -u -d @1764441600` → 2025-11-29 18:40:00.
        assert_eq!(date_string(1_764_441_600_000, 0), "2025-11-29");
        assert_eq!(date_string(951_782_400_000, 0), "2000-02-29");
        assert_eq!(date_string(4_107_542_400_000, 0), "2100-03-01");
        assert_eq!(date_string(-86_400_000 * 365, 0), "1969-01-01");
    }

    #[test]
    fn every_day_of_four_centuries_follows_the_previous_one() {
        // Walks 1900-01-01 .. 2300-01-01 and checks each date is the day
        // after the one before, with the Gregorian month lengths.
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
        assert_eq!(previous, (2299, 12, 31));
    }

    #[test]
    fn time_of_day_and_stamp() {
        // 2026-11-29 18:56:07.999 UTC.
        let ms = 1_795_978_567_999;
        assert_eq!(date_string(ms, 0), "2026-11-29");
        assert_eq!(UtcTime::from_ms(ms).stamp(), "20261129T185607Z");
        // One millisecond before the epoch is the last second of 1969.
        assert_eq!(UtcTime::from_ms(-1).stamp(), "19691231T235959Z");
    }

    #[test]
    fn yesterday_crosses_month_and_year() {
        let new_year = UtcTime::from_ms(0).year; // sanity: 1970
        assert_eq!(new_year, 1970);
        let jan_first_2027 = 1_798_761_600_000; // 2027-01-01T00:00:00Z
        assert_eq!(date_string(jan_first_2027, 0), "2027-01-01");
        assert_eq!(date_string(jan_first_2027, -1), "2026-12-31");
        assert_eq!(date_string(jan_first_2027 - 1, 0), "2026-12-31");
        let march_first_2028 = jan_first_2027 + (365 + 31 + 29) * DAY; // leap year
        assert_eq!(date_string(march_first_2028, 0), "2028-03-01");
        assert_eq!(date_string(march_first_2028, -1), "2028-02-29");
    }
}
