//! Every shape of filter the spec names, checked against an independent evaluation: each filter
//! is paired with a plain Rust predicate over the same generated recipients, and the server must
//! return exactly the recipients the predicate accepts (also through a paged document).

use herald_tests::{json, Api, TestServer};
use serde_json::Value;

#[derive(Clone, Debug)]
struct Person {
    id: i64,
    email: String,
    city: Option<&'static str>,
    age: Option<i64>,
    score: f64,
    optin: bool,
    birth: (i32, u32, u32),
    created: i64,
}

const CITIES: [Option<&str>; 5] = [Some("Paris"), Some("Lyon"), Some("Berlin"), None, Some("Paris 15e")];

fn people() -> Vec<Person> {
    (0..60)
        .map(|i: i64| Person {
            id: i + 1,
            email: if i % 7 == 0 { format!("vip_{i}%@corp.example") } else { format!("user{i}@example.com") },
            city: CITIES[(i % 5) as usize],
            age: if i % 11 == 0 { None } else { Some(10 + i * 3 % 70) },
            score: (i * 13 % 100) as f64 / 4.0,
            optin: i % 3 == 0,
            birth: (1950 + (i % 50) as i32, 1 + (i % 12) as u32, 1 + (i % 28) as u32),
            created: 1_704_067_200 + i * 86_400,
        })
        .collect()
}

fn ts(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // 2024-01-01 is day 19723; the generated instants are all in 2024.
    let date = chrono_like(days);
    format!("{:02}.{:02}.{} {:02}:{:02}:{:02}", date.2, date.1, date.0, rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Civil date from days since the Unix epoch (Howard Hinnant's algorithm), to stay independent
/// of the server's date code.
fn chrono_like(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

async fn load(api: &Api, people: &[Person]) {
    for p in people {
        let mut pd = json!({
            "EMAIL": p.email, "SCORE": p.score, "OPTIN": p.optin,
            "BIRTHDATE": format!("{:02}.{:02}.{}", p.birth.2, p.birth.1, p.birth.0),
            "CREATED_AT": ts(p.created),
        });
        if let Some(c) = p.city {
            pd["CITY"] = json!(c);
        }
        if let Some(a) = p.age {
            pd["AGE"] = json!(a);
        }
        assert_eq!(api.create_recipient(pd).await, p.id);
    }
}

fn encode(filter: &str) -> String {
    filter
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn returned_ids(v: &Value) -> Vec<i64> {
    v.as_array().unwrap().iter().map(|r| r["personData"]["USER_ID"].as_i64().unwrap()).collect()
}

#[tokio::test]
async fn filters_return_exactly_the_matching_recipients() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let people = people();
    load(&api, &people).await;

    type Pred = Box<dyn Fn(&Person) -> bool>;
    let cases: Vec<(&str, Pred)> = vec![
        (r#"CITY=="Paris""#, Box::new(|p| p.city == Some("Paris"))),
        ("CITY=='Paris 15e'", Box::new(|p| p.city == Some("Paris 15e"))),
        ("CITY!=Paris", Box::new(|p| p.city != Some("Paris"))),
        ("AGE>=20 and AGE<40", Box::new(|p| p.age.is_some_and(|a| (20..40).contains(&a)))),
        ("AGE>70;AGE<=75", Box::new(|p| p.age.is_some_and(|a| a > 70 && a <= 75))),
        ("CITY=in=(Lyon or Berlin)", Box::new(|p| matches!(p.city, Some("Lyon" | "Berlin")))),
        ("CITY=in=('Lyon','Berlin')", Box::new(|p| matches!(p.city, Some("Lyon" | "Berlin")))),
        ("CITY=out=(Lyon,Berlin)", Box::new(|p| !matches!(p.city, Some("Lyon" | "Berlin")))),
        ("(CITY==Paris or CITY==Lyon) and OPTIN==true", Box::new(|p| matches!(p.city, Some("Paris" | "Lyon")) && p.optin)),
        ("CITY==Paris or CITY==Lyon and OPTIN==true", Box::new(|p| p.city == Some("Paris") || (p.city == Some("Lyon") && p.optin))),
        ("EMAIL==*@example.com", Box::new(|p| p.email.ends_with("@example.com"))),
        ("EMAIL==user1?@example.com", Box::new(|p| p.email.len() == "user10@example.com".len() && p.email.starts_with("user1"))),
        ("EMAIL==vip_*%@corp.example", Box::new(|p| p.email.starts_with("vip_"))),
        ("EMAIL==*_1%*", Box::new(|p| p.email.contains("_1%"))),
        ("EMAIL==user_*", Box::new(|_| false)),
        ("CITY==paris", Box::new(|_| false)),
        ("SCORE>12.5", Box::new(|p| p.score > 12.5)),
        ("OPTIN==false", Box::new(|p| !p.optin)),
        ("BIRTHDATE<'1960-01-01T00:00:00Z'", Box::new(|p| p.birth.0 < 1960)),
        ("BIRTHDATE>='01.06.1990'", Box::new(|p| (p.birth.0, p.birth.1, p.birth.2) >= (1990, 6, 1))),
        ("CREATED_AT>'2024-01-31T00:00:00Z'", Box::new(|p| p.created > 1_704_067_200 + 30 * 86_400)),
        ("CREATED_AT<='2024-01-11T02:00:00+02:00'", Box::new(|p| p.created <= 1_704_067_200 + 10 * 86_400)),
        ("AGE=in=(13,16,19)", Box::new(|p| matches!(p.age, Some(13 | 16 | 19)))),
    ];
    let mut expected_total = 0;
    for (filter, pred) in &cases {
        let expected: Vec<i64> = people.iter().filter(|p| pred(p)).map(|p| p.id).collect();
        expected_total += expected.len();
        let plain = api.get(&format!("/recipients?filter={}", encode(filter))).await;
        plain.expect(200);
        assert_eq!(returned_ids(&plain.json()), expected, "filter {filter}");
        let paged = api.get(&format!("/recipients?objectResponse=true&pageSize=7&filter={}", encode(filter))).await.json();
        assert_eq!(paged["page"]["totalElements"], expected.len(), "paged {filter}");
        assert_eq!(returned_ids(&paged["content"]), expected.iter().copied().take(7).collect::<Vec<_>>(), "paged {filter}");
    }
    assert!(expected_total > 100, "the data exercises the filters");
}

#[tokio::test]
async fn invalid_filters_get_their_status() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let cases = [
        ("COLOUR==red", 422),
        ("AGE==old", 400),
        ("OPTIN==maybe", 400),
        ("BIRTHDATE<'soon'", 400),
        ("CITY!=Par*", 400),
        ("CITY=in=(Par*,Lyon)", 400),
        ("CITY==", 400),
        ("(CITY==Paris", 400),
        ("CITY==Paris)", 400),
        ("CITY~=Paris", 400),
        ("and CITY==Paris", 400),
        ("", 400),
    ];
    for (filter, status) in cases {
        let a = api.get(&format!("/recipients?filter={}", encode(filter))).await;
        assert_eq!(a.status.as_u16(), status, "{filter}: {}", a.text);
        if status == 400 {
            assert!(!a.message().is_empty());
        }
    }
}
