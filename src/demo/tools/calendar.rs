//! The demo calendars and their twelve `calendar_*` tools: events with attendees and responses,
//! reminders, free-time search over everyone's events within working hours.

use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};

use super::{Args, State, ToolError, ToolOut, ToolResult, USER, at, fail, time_arg};
use crate::clock::{fmt, parse};

/// Free-time search looks at this many days when `time_max` is omitted.
const FREE_TIME_DEFAULT_DAYS: i64 = 5;
/// Working hours (UTC) that `calendar_find_free_time` proposes slots in.
const WORK_START_HOUR: u8 = 9;
const WORK_END_HOUR: u8 = 17;
/// At most this many free slots are returned.
const MAX_SLOTS: usize = 5;

#[derive(Debug, Clone)]
pub struct Event {
    pub id: String,
    pub calendar_id: String,
    pub title: String,
    pub start: String,
    pub end: String,
    pub attendees: Vec<(String, String)>,
    pub location: String,
    pub description: String,
    pub reminders: Vec<(i64, String)>,
}

pub struct Calendars {
    pub calendars: Vec<(String, String, String)>,
    pub events: Vec<Event>,
}

impl Calendars {
    pub fn seeded(now: OffsetDateTime) -> Calendars {
        let day = now.replace_time(time::Time::MIDNIGHT) + Duration::days(1);
        let m =
            |d: i64, h: i64| ((day + Duration::days(d) + Duration::hours(h)) - now).whole_minutes();
        let seed = [
            (
                "e1",
                "primary",
                "Q4 planning",
                m(0, 10),
                60,
                "priya@example.com,sam@example.com",
                "Room 4.01",
            ),
            (
                "e2",
                "primary",
                "1:1 with Jordan",
                m(0, 14),
                30,
                "jordan@example.com",
                "Video call",
            ),
            (
                "e3",
                "team",
                "Payments standup",
                m(1, 9),
                15,
                "priya@example.com,sam@example.com,jordan@example.com",
                "Video call",
            ),
            ("e4", "primary", "Dentist", m(2, 16), 60, "", "Main St 12"),
            (
                "e5",
                "team",
                "Offsite prep",
                m(3, 13),
                90,
                "jordan@example.com,priya@example.com",
                "Room 2.10",
            ),
        ];
        let events = seed
            .iter()
            .map(|(id, cal, title, start, mins, who, loc)| Event {
                id: format!("evt_{id}"),
                calendar_id: cal.to_string(),
                title: title.to_string(),
                start: at(now, *start),
                end: at(now, start + mins),
                attendees: std::iter::once(USER)
                    .chain(who.split(',').filter(|w| !w.is_empty()))
                    .map(|w| {
                        (
                            w.to_string(),
                            if w == USER { "accepted" } else { "needsAction" }.to_string(),
                        )
                    })
                    .collect(),
                location: loc.to_string(),
                description: String::new(),
                reminders: vec![],
            })
            .collect();
        Calendars {
            calendars: vec![
                ("primary".into(), USER.into(), "UTC".into()),
                ("team".into(), "Payments team".into(), "UTC".into()),
            ],
            events,
        }
    }

    fn get_mut(&mut self, id: &str) -> Result<&mut Event, ToolError> {
        self.events.iter_mut().find(|e| e.id == id).ok_or_else(|| {
            ToolError::Failed(format!(
                "no event with id {id:?}; calendar_list_events shows ids"
            ))
        })
    }
}

pub fn call(s: &mut State, op: &str, a: &Args) -> ToolResult {
    match op {
        "list_calendars" => Ok(ToolOut::json(
            json!({"calendars": s.calendar.calendars.iter()
            .map(|(id, name, tz)| json!({"id": id, "name": name, "time_zone": tz})).collect::<Vec<_>>()}),
        )),
        "list_events" => {
            let cal = a.str("calendar_id");
            if let Some(c) = cal {
                check_calendar(s, c)?;
            }
            let list = window(s, a)?
                .into_iter()
                .filter(|e| cal.is_none_or(|c| e.calendar_id == c))
                .take(a.limit(50))
                .map(view)
                .collect::<Vec<_>>();
            Ok(ToolOut::json(json!({"events": list})))
        }
        "get_event" => Ok(ToolOut::json(view(s.calendar.get_mut(a.req("event_id")?)?))),
        "create_event" => {
            let (start, end) = span(a)?;
            let cal = a.str("calendar_id").unwrap_or("primary").to_string();
            check_calendar(s, &cal)?;
            let id = s.id("evt");
            let mut attendees = vec![(USER.to_string(), "accepted".to_string())];
            attendees.extend(
                a.strings("attendees")
                    .into_iter()
                    .filter(|x| x != USER)
                    .map(|x| (x, "needsAction".into())),
            );
            let e = Event {
                id,
                calendar_id: cal,
                title: a.req("title")?.into(),
                start: fmt(start),
                end: fmt(end),
                attendees,
                location: a.str("location").unwrap_or("").into(),
                description: a.str("description").unwrap_or("").into(),
                reminders: vec![],
            };
            let v = view(&e);
            s.calendar.events.push(e);
            Ok(ToolOut::json(json!({"created": v})))
        }
        "update_event" => {
            let e = s.calendar.get_mut(a.req("event_id")?)?;
            let start = time_arg(a, "start")?
                .unwrap_or_else(|| parse(&e.start).expect("stored times parse"));
            let end =
                time_arg(a, "end")?.unwrap_or_else(|| parse(&e.end).expect("stored times parse"));
            if end <= start {
                return fail(
                    "the event would end before it starts; give both \"start\" and \"end\"",
                );
            }
            (e.start, e.end) = (fmt(start), fmt(end));
            for (key, field) in [
                ("title", &mut e.title),
                ("location", &mut e.location),
                ("description", &mut e.description),
            ] {
                if let Some(v) = a.str(key) {
                    *field = v.into();
                }
            }
            Ok(ToolOut::json(json!({"updated": view(e)})))
        }
        "delete_event" => {
            let id = a.req("event_id")?;
            let e = s.calendar.get_mut(id)?.clone();
            s.calendar.events.retain(|x| x.id != id);
            let notified: Vec<&String> = if a.bool("notify_attendees") {
                e.attendees
                    .iter()
                    .map(|(w, _)| w)
                    .filter(|w| *w != USER)
                    .collect()
            } else {
                vec![]
            };
            Ok(ToolOut::json(
                json!({"deleted": id, "title": e.title, "notified": notified}),
            ))
        }
        "search_events" => {
            let q = a.req("query")?.to_lowercase();
            let hits = window(s, a)?
                .into_iter()
                .filter(|e| {
                    let who: Vec<&str> = e.attendees.iter().map(|(w, _)| w.as_str()).collect();
                    format!(
                        "{} {} {} {}",
                        e.title,
                        e.description,
                        e.location,
                        who.join(" ")
                    )
                    .to_lowercase()
                    .contains(&q)
                })
                .map(view)
                .collect::<Vec<_>>();
            Ok(ToolOut::json(
                json!({"query": a.req("query")?, "events": hits}),
            ))
        }
        "find_free_time" => free_time(s, a),
        "respond_to_invite" => {
            let e = s.calendar.get_mut(a.req("event_id")?)?;
            let response = a.req("response")?.to_string();
            match e.attendees.iter_mut().find(|(w, _)| w == USER) {
                Some(me) => me.1 = response.clone(),
                None => return fail(format!("you are not invited to {:?}", e.title)),
            }
            Ok(ToolOut::json(
                json!({"event_id": e.id, "response": response, "comment": a.str("comment")}),
            ))
        }
        "add_attendees" => {
            let e = s.calendar.get_mut(a.req("event_id")?)?;
            let mut invited = vec![];
            for w in a.strings("attendees") {
                if !e.attendees.iter().any(|(x, _)| *x == w) {
                    e.attendees.push((w.clone(), "needsAction".into()));
                    invited.push(w);
                }
            }
            Ok(ToolOut::json(
                json!({"event_id": e.id, "invited": invited, "attendees": view(e)["attendees"]}),
            ))
        }
        "set_reminder" => {
            let e = s.calendar.get_mut(a.req("event_id")?)?;
            let method = a.str("method").unwrap_or("popup").to_string();
            let minutes = a.int("minutes_before").unwrap_or(10);
            e.reminders
                .retain(|(m, how)| !(*m == minutes && *how == method));
            e.reminders.push((minutes, method));
            Ok(ToolOut::json(
                json!({"event_id": e.id, "reminders": view(e)["reminders"]}),
            ))
        }
        "create_calendar" => {
            let name = a.req("name")?.to_string();
            if s.calendar.calendars.iter().any(|(_, n, _)| *n == name) {
                return fail(format!("a calendar named {name:?} already exists"));
            }
            let id = s.id("cal");
            let tz = a.str("time_zone").unwrap_or("UTC").to_string();
            s.calendar
                .calendars
                .push((id.clone(), name.clone(), tz.clone()));
            Ok(ToolOut::json(
                json!({"created": {"id": id, "name": name, "time_zone": tz, "color": a.str("color")}}),
            ))
        }
        _ => Err(ToolError::BadParams(format!("unknown tool: calendar_{op}"))),
    }
}

fn check_calendar(s: &State, id: &str) -> Result<(), ToolError> {
    if s.calendar.calendars.iter().any(|(c, _, _)| c == id) {
        Ok(())
    } else {
        fail(format!(
            "no calendar {id:?}; calendar_list_calendars shows the ids"
        ))
    }
}

fn span(a: &Args) -> Result<(OffsetDateTime, OffsetDateTime), ToolError> {
    let missing = |k: &str| ToolError::BadParams(format!("missing required argument \"{k}\""));
    let start = time_arg(a, "start")?.ok_or_else(|| missing("start"))?;
    let end = time_arg(a, "end")?.ok_or_else(|| missing("end"))?;
    if end <= start {
        return fail(format!(
            "\"end\" ({}) must be after \"start\" ({})",
            fmt(end),
            fmt(start)
        ));
    }
    Ok((start, end))
}

/// Events overlapping [time_min, time_max), by start time.
fn window<'a>(s: &'a State, a: &Args) -> Result<Vec<&'a Event>, ToolError> {
    let min = time_arg(a, "time_min")?.map(fmt);
    let max = time_arg(a, "time_max")?.map(fmt);
    let mut v: Vec<&Event> = s
        .calendar
        .events
        .iter()
        .filter(|e| {
            min.as_ref().is_none_or(|m| e.end > *m) && max.as_ref().is_none_or(|m| e.start < *m)
        })
        .collect();
    v.sort_by(|x, y| x.start.cmp(&y.start));
    Ok(v)
}

fn free_time(s: &State, a: &Args) -> ToolResult {
    let who = a.strings("attendees");
    let dur = Duration::minutes(a.int("duration_minutes").unwrap_or(30));
    let step = Duration::minutes(30);
    let from = time_arg(a, "time_min")?.unwrap_or(s.now);
    let to = time_arg(a, "time_max")?.unwrap_or(from + Duration::days(FREE_TIME_DEFAULT_DAYS));
    let busy: Vec<(OffsetDateTime, OffsetDateTime)> = s
        .calendar
        .events
        .iter()
        .filter(|e| {
            e.attendees
                .iter()
                .any(|(w, r)| who.contains(w) && r != "declined")
        })
        .filter_map(|e| Some((parse(&e.start)?, parse(&e.end)?)))
        .collect();
    // Start on the next half hour.
    let mut t = from.replace_second(0).unwrap_or(from);
    let rem = i64::from(t.minute() % 30);
    if rem != 0 {
        t += Duration::minutes(30 - rem);
    }
    let mut slots = vec![];
    while t + dur <= to && slots.len() < MAX_SLOTS {
        let end = t + dur;
        let in_hours = t.hour() >= WORK_START_HOUR
            && (end.hour() < WORK_END_HOUR || (end.hour() == WORK_END_HOUR && end.minute() == 0))
            && end.date() == t.date();
        if in_hours && busy.iter().all(|(b0, b1)| end <= *b0 || t >= *b1) {
            slots.push(json!({"start": fmt(t), "end": fmt(end)}));
        }
        t += step;
    }
    Ok(ToolOut::json(
        json!({"attendees": who, "duration_minutes": dur.whole_minutes(), "slots": slots}),
    ))
}

fn view(e: &Event) -> Value {
    json!({
        "id": e.id, "calendar_id": e.calendar_id, "title": e.title, "start": e.start, "end": e.end,
        "location": e.location, "description": e.description,
        "attendees": e.attendees.iter().map(|(w, r)| json!({"email": w, "response": r})).collect::<Vec<_>>(),
        "reminders": e.reminders.iter().map(|(m, how)| json!({"minutes_before": m, "method": how})).collect::<Vec<_>>(),
    })
}
