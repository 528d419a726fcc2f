//! The demo browser and its twelve `browser_*` tools: tabs with history over a small fake web
//! (a shop with search, product, cart and login pages, and a docs site). Elements are found by
//! simple CSS selectors (`#id`, `.class`, `tag`, `tag[name=x]`); JavaScript evaluation understands
//! a handful of DOM expressions and says so for anything else.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::web::{Action, DOCS, Page, SHOP, find, known_host, no_element, render};
use super::{Args, State, ToolError, ToolOut, ToolResult, fail};

/// A 4x3 pale-blue PNG: what every screenshot looks like in the demo.
const SCREENSHOT_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAQAAAADCAIAAAA7ljmRAAAAEUlEQVR4nGN49+4/HDHg5AAAm6ciRX7TIX8AAAAASUVORK5CYII=";

#[derive(Debug, Clone)]
pub struct Tab {
    pub id: String,
    pub history: Vec<String>,
    pub values: BTreeMap<String, String>,
}

pub struct Browser {
    pub tabs: Vec<Tab>,
    pub active: usize,
    pub cart: Vec<&'static str>,
    next_tab: u32,
}

impl Browser {
    pub fn new() -> Browser {
        Browser {
            tabs: vec![Tab {
                id: "tab_1".into(),
                history: vec!["about:blank".into()],
                values: BTreeMap::new(),
            }],
            active: 0,
            cart: vec![],
            next_tab: 2,
        }
    }

    fn tab(&mut self) -> Result<&mut Tab, ToolError> {
        let i = self.active;
        self.tabs
            .get_mut(i)
            .ok_or_else(|| ToolError::Failed("no tab is open; use browser_open_tab".into()))
    }

    fn url(&self) -> String {
        self.tabs
            .get(self.active)
            .and_then(|t| t.history.last().cloned())
            .unwrap_or_else(|| "about:blank".into())
    }

    fn page(&self) -> Page {
        render(&self.url(), &self.cart)
    }
}

impl Default for Browser {
    fn default() -> Self {
        Browser::new()
    }
}

fn go(s: &mut State, url: &str) -> ToolResult {
    let url = url.trim().to_string();
    if !known_host(&url) {
        return fail(format!(
            "net::ERR_NAME_NOT_RESOLVED: {url} (the demo web has {SHOP}/ and {DOCS}/)"
        ));
    }
    let tab = s.browser.tab()?;
    tab.history.push(url);
    tab.values.clear();
    Ok(ToolOut::json(summary(&s.browser)))
}

fn summary(b: &Browser) -> Value {
    let p = b.page();
    json!({"url": b.url(), "title": p.title, "status": if p.title == "Not found" { 404 } else { 200 }})
}

fn page_text(p: &Page, values: &BTreeMap<String, String>) -> String {
    p.elements
        .iter()
        .map(|e| match e.input {
            Some(name) => format!(
                "[input {name}: {}]",
                values.get(name).map_or("", String::as_str)
            ),
            None => e.text.clone(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn call(s: &mut State, op: &str, a: &Args) -> ToolResult {
    match op {
        "navigate" => go(s, a.req("url")?),
        "go_back" => {
            let tab = s.browser.tab()?;
            if tab.history.len() < 2 {
                return fail("there is no previous page in this tab");
            }
            tab.history.pop();
            Ok(ToolOut::json(summary(&s.browser)))
        }
        "click" => {
            let sel = a.req("selector")?;
            let page = s.browser.page();
            let target = find(&page, sel)
                .ok_or_else(|| no_element(&page, sel))?
                .clone();
            match target.action {
                Action::Go(url) => go(s, &url),
                Action::Submit(path) => {
                    let tab = s.browser.tab()?;
                    let q: Vec<String> = tab
                        .values
                        .iter()
                        .map(|(k, v)| format!("{k}={}", v.replace(' ', "+").replace('@', "%40")))
                        .collect();
                    go(s, &format!("{path}?{}", q.join("&")))
                }
                Action::AddToCart(id) => {
                    s.browser.cart.push(id);
                    Ok(ToolOut::json(
                        json!({"clicked": sel, "cart_items": s.browser.cart.len()}),
                    ))
                }
                Action::None => Ok(ToolOut::json(
                    json!({"clicked": sel, "text": target.text, "navigated": false}),
                )),
            }
        }
        "type_text" => {
            let (sel, value) = (a.req("selector")?, a.req("text")?);
            type_into(s, sel, value)?;
            if a.bool("submit") {
                let page = s.browser.page();
                if let Some(path) = page.elements.iter().find_map(|e| match &e.action {
                    Action::Submit(p) => Some(p.clone()),
                    _ => None,
                }) {
                    let tab = s.browser.tab()?;
                    let q: Vec<String> = tab
                        .values
                        .iter()
                        .map(|(k, v)| format!("{k}={}", v.replace(' ', "+").replace('@', "%40")))
                        .collect();
                    return go(s, &format!("{path}?{}", q.join("&")));
                }
            }
            Ok(ToolOut::json(json!({"typed": value, "into": sel})))
        }
        "fill_form" => {
            let fields =
                a.0.get("fields")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
            for f in &fields {
                let sel = f.get("selector").and_then(Value::as_str).unwrap_or("");
                type_into(s, sel, f.get("value").and_then(Value::as_str).unwrap_or(""))?;
            }
            Ok(ToolOut::json(
                json!({"filled": fields.len(), "url": s.browser.url()}),
            ))
        }
        "take_screenshot" => {
            if let Some(sel) = a.str("selector") {
                let page = s.browser.page();
                find(&page, sel).ok_or_else(|| no_element(&page, sel))?;
            }
            let mut out = ToolOut::json(
                json!({"url": s.browser.url(), "full_page": a.bool("full_page"), "width": 4, "height": 3}),
            );
            out.extra
                .push(json!({"type": "image", "data": SCREENSHOT_PNG, "mimeType": "image/png"}));
            Ok(out)
        }
        "get_page_text" => {
            let page = s.browser.page();
            let values = s.browser.tab()?.values.clone();
            let text = match a.str("selector") {
                Some(sel) => find(&page, sel)
                    .ok_or_else(|| no_element(&page, sel))?
                    .text
                    .clone(),
                None => page_text(&page, &values),
            };
            Ok(ToolOut::json(
                json!({"url": s.browser.url(), "title": page.title, "text": text}),
            ))
        }
        "evaluate_javascript" => Ok(ToolOut::json(
            json!({"result": eval(&s.browser, a.req("script")?)?}),
        )),
        "list_tabs" => {
            let b = &s.browser;
            let tabs: Vec<Value> = b.tabs.iter().enumerate().map(|(i, t)| {
                let url = t.history.last().cloned().unwrap_or_default();
                json!({"id": t.id, "url": url, "title": render(&url, &b.cart).title, "active": i == b.active})
            }).collect();
            Ok(ToolOut::json(json!({"tabs": tabs})))
        }
        "open_tab" => {
            let b = &mut s.browser;
            let id = format!("tab_{}", b.next_tab);
            b.next_tab += 1;
            b.tabs.push(Tab {
                id,
                history: vec!["about:blank".into()],
                values: BTreeMap::new(),
            });
            b.active = b.tabs.len() - 1;
            match a.str("url") {
                Some(u) => go(s, u),
                None => Ok(ToolOut::json(summary(&s.browser))),
            }
            .map(|mut o| {
                o.data["tab_id"] = json!(s.browser.tabs[s.browser.active].id);
                o
            })
        }
        "close_tab" => {
            let b = &mut s.browser;
            let i = match a.str("tab_id") {
                Some(id) => b.tabs.iter().position(|t| t.id == id).ok_or_else(|| {
                    ToolError::Failed(format!("no tab {id:?}; browser_list_tabs shows ids"))
                })?,
                None => b.active,
            };
            if i >= b.tabs.len() {
                return fail("no tab is open");
            }
            let closed = b.tabs.remove(i).id;
            b.active = b.active.min(b.tabs.len().saturating_sub(1));
            Ok(ToolOut::json(
                json!({"closed": closed, "open_tabs": b.tabs.len()}),
            ))
        }
        "wait_for" => {
            let page = s.browser.page();
            let (sel, want) = (a.str("selector"), a.str("text"));
            if sel.is_none() && want.is_none() {
                return Err(ToolError::BadParams(
                    "give \"selector\", \"text\" or both".into(),
                ));
            }
            let found = sel.is_none_or(|x| find(&page, x).is_some())
                && want.is_none_or(|t| page.elements.iter().any(|e| e.text.contains(t)));
            if !found {
                return fail(format!(
                    "timed out after {} ms waiting for {}",
                    a.int("timeout_ms").unwrap_or(5000),
                    sel.or(want).unwrap_or("")
                ));
            }
            Ok(ToolOut::json(
                json!({"found": true, "url": s.browser.url()}),
            ))
        }
        _ => Err(ToolError::BadParams(format!("unknown tool: browser_{op}"))),
    }
}

fn type_into(s: &mut State, sel: &str, value: &str) -> Result<(), ToolError> {
    let page = s.browser.page();
    let e = find(&page, sel).ok_or_else(|| no_element(&page, sel))?;
    let Some(name) = e.input else {
        return fail(format!("{sel:?} is not an input field"));
    };
    s.browser.tab()?.values.insert(name.into(), value.into());
    Ok(())
}

/// The few DOM expressions the demo browser understands.
fn eval(b: &Browser, script: &str) -> Result<Value, ToolError> {
    let src = script
        .trim()
        .trim_start_matches("return ")
        .trim_end_matches(';')
        .trim();
    let page = b.page();
    let quoted = |s: &str| {
        s.trim()
            .trim_matches(|c| c == '\'' || c == '"' || c == '`')
            .to_string()
    };
    match src {
        "document.title" => return Ok(json!(page.title)),
        "location.href" | "window.location.href" | "document.URL" | "document.location.href" => {
            return Ok(json!(b.url()));
        }
        "document.body.innerText" | "document.body.textContent" => {
            return Ok(json!(page_text(&page, &BTreeMap::new())));
        }
        _ => {}
    }
    if let Some(rest) = src.strip_prefix("document.querySelectorAll(")
        && let Some(sel) = rest.strip_suffix(").length")
    {
        let sel = quoted(sel);
        return Ok(json!(
            page.elements
                .iter()
                .filter(|e| e.selectors.contains(&sel))
                .count()
        ));
    }
    if let Some(rest) = src.strip_prefix("document.querySelector(")
        && let Some((sel, prop)) = rest.split_once(").")
    {
        let e = find(&page, &quoted(sel)).ok_or_else(|| no_element(&page, &quoted(sel)))?;
        return match prop {
            "textContent" | "innerText" => Ok(json!(e.text)),
            "value" => Ok(json!(
                e.input
                    .and_then(|n| b.tabs.get(b.active)?.values.get(n).cloned())
                    .unwrap_or_default()
            )),
            _ => fail(format!(
                "the demo browser cannot read .{prop}; it knows textContent, innerText and value"
            )),
        };
    }
    if let Ok(v) = serde_json::from_str::<Value>(src) {
        return Ok(v);
    }
    fail(format!(
        "the demo browser evaluates only: document.title, location.href, document.body.innerText, document.querySelector(S).textContent|innerText|value, document.querySelectorAll(S).length and JSON literals; got {src:?}"
    ))
}
