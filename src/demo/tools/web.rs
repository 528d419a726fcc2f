//! The demo browser's fake web: a shop (home, search, product, cart, login, account) and a docs
//! site, rendered as lists of elements addressed by simple CSS selectors. Data and lookups only.

use super::ToolError;

pub(super) const SHOP: &str = "https://shop.example";
pub(super) const DOCS: &str = "https://docs.example";

/// What clicking an element does.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Action {
    Go(String),
    /// Submits the page's inputs to this path (`?name=value` appended).
    Submit(String),
    AddToCart(&'static str),
    None,
}

#[derive(Debug, Clone)]
pub(super) struct El {
    pub(super) selectors: Vec<String>,
    pub(super) text: String,
    pub(super) action: Action,
    /// For inputs: the `name` they submit under.
    pub(super) input: Option<&'static str>,
}

pub(super) struct Page {
    pub(super) title: String,
    pub(super) elements: Vec<El>,
}

pub(super) const PRODUCTS: &[(&str, &str, &str)] = &[
    ("42", "Mechanical keyboard", "$89"),
    ("43", "Wireless mouse", "$29"),
    ("44", "USB-C hub", "$45"),
];

fn el(sels: &[&str], text: &str, action: Action) -> El {
    El {
        selectors: sels.iter().map(|s| s.to_string()).collect(),
        text: text.into(),
        action,
        input: None,
    }
}

fn input(sels: &[&str], name: &'static str) -> El {
    El {
        input: Some(name),
        ..el(sels, "", Action::None)
    }
}

fn text(t: &str) -> El {
    el(&["p"], t, Action::None)
}

/// The fake web. Unknown paths on a known host are a 404 page; unknown hosts don't resolve.
pub(super) fn render(url: &str, cart: &[&str]) -> Page {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let q = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("q="))
        .unwrap_or("")
        .replace('+', " ");
    let nav = || {
        vec![
            el(
                &["a#nav-home", "#nav-home"],
                "Home",
                Action::Go(format!("{SHOP}/")),
            ),
            el(
                &["a#nav-cart", "#nav-cart"],
                "Cart",
                Action::Go(format!("{SHOP}/cart")),
            ),
            el(
                &["a#nav-login", "#nav-login"],
                "Log in",
                Action::Go(format!("{SHOP}/login")),
            ),
        ]
    };
    let (title, mut elements) = match path.trim_end_matches('/') {
        "about:blank" => ("".to_string(), vec![]),
        p if p == SHOP => (
            "Example Shop".into(),
            vec![
                el(&["h1"], "Welcome to Example Shop", Action::None),
                input(&["#search", "input[name=q]", "input"], "q"),
                el(
                    &["#search-button", "button"],
                    "Search",
                    Action::Submit(format!("{SHOP}/search")),
                ),
                el(
                    &["a.product", "#product-42", "a"],
                    "Mechanical keyboard",
                    Action::Go(format!("{SHOP}/product/42")),
                ),
            ],
        ),
        p if p == format!("{SHOP}/search") => {
            let hits: Vec<El> = PRODUCTS
                .iter()
                .filter(|(_, n, _)| n.to_lowercase().contains(&q.to_lowercase()))
                .map(|(id, n, price)| {
                    el(
                        &["a.product", &format!("#product-{id}"), "a"],
                        &format!("{n} {price}"),
                        Action::Go(format!("{SHOP}/product/{id}")),
                    )
                })
                .collect();
            let mut v = vec![el(
                &["h1"],
                &format!("{} results for \"{q}\"", hits.len()),
                Action::None,
            )];
            v.extend(hits);
            (format!("Search: {q} - Example Shop"), v)
        }
        p if p.starts_with(&format!("{SHOP}/product/")) => {
            match PRODUCTS.iter().find(|(id, _, _)| p.ends_with(id)) {
                Some((id, n, price)) => (
                    format!("{n} - Example Shop"),
                    vec![
                        el(&["h1"], n, Action::None),
                        el(&[".price", "#price"], price, Action::None),
                        el(
                            &["#add-to-cart", "button"],
                            "Add to cart",
                            Action::AddToCart(id),
                        ),
                    ],
                ),
                None => (
                    "Not found".into(),
                    vec![el(&["h1"], "404 Not Found", Action::None)],
                ),
            }
        }
        p if p == format!("{SHOP}/cart") => {
            let mut v = vec![el(
                &["h1"],
                &format!("Your cart ({} items)", cart.len()),
                Action::None,
            )];
            v.extend(
                cart.iter()
                    .filter_map(|c| PRODUCTS.iter().find(|(id, _, _)| id == c))
                    .map(|(_, n, price)| {
                        el(&[".cart-item", "li"], &format!("{n} {price}"), Action::None)
                    }),
            );
            ("Cart - Example Shop".into(), v)
        }
        p if p == format!("{SHOP}/login") => (
            "Log in - Example Shop".into(),
            vec![
                el(&["h1"], "Log in", Action::None),
                input(&["#email", "input[name=email]"], "email"),
                input(
                    &["#password", "input[name=password]", "input[type=password]"],
                    "password",
                ),
                el(
                    &["#login-button", "button"],
                    "Log in",
                    Action::Submit(format!("{SHOP}/account")),
                ),
            ],
        ),
        p if p == format!("{SHOP}/account") => {
            let who = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("email="))
                .unwrap_or("");
            if who.is_empty() {
                (
                    "Log in failed - Example Shop".into(),
                    vec![el(
                        &["h1", ".error"],
                        "Enter your email and password",
                        Action::None,
                    )],
                )
            } else {
                (
                    "Your account - Example Shop".into(),
                    vec![el(
                        &["h1"],
                        &format!("Signed in as {}", who.replace("%40", "@")),
                        Action::None,
                    )],
                )
            }
        }
        p if p == DOCS => (
            "Example Docs".into(),
            vec![
                el(&["h1"], "Example Docs", Action::None),
                text("Guides for the Example Shop API."),
                el(
                    &["a#quickstart", "a"],
                    "Quick start",
                    Action::Go(format!("{DOCS}/quickstart")),
                ),
            ],
        ),
        p if p == format!("{DOCS}/quickstart") => (
            "Quick start - Example Docs".into(),
            vec![
                el(&["h1"], "Quick start", Action::None),
                text("1. Create an API key. 2. Call GET /v1/products. 3. Page with ?cursor=."),
                el(
                    &["pre", "code"],
                    "curl -H 'Authorization: Bearer KEY' https://api.shop.example/v1/products",
                    Action::None,
                ),
            ],
        ),
        _ => (
            "Not found".into(),
            vec![el(&["h1"], "404 Not Found", Action::None)],
        ),
    };
    if url.starts_with(SHOP) {
        elements.splice(0..0, nav());
    }
    Page { title, elements }
}

pub(super) fn known_host(url: &str) -> bool {
    url == "about:blank"
        || [SHOP, DOCS].iter().any(|h| {
            url == *h || url.starts_with(&format!("{h}/")) || url.starts_with(&format!("{h}?"))
        })
}

pub(super) fn find<'p>(page: &'p Page, sel: &str) -> Option<&'p El> {
    let sel = sel.trim();
    page.elements
        .iter()
        .find(|e| e.selectors.iter().any(|s| s == sel))
}

pub(super) fn no_element(page: &Page, sel: &str) -> ToolError {
    let known: Vec<&str> = page
        .elements
        .iter()
        .filter_map(|e| e.selectors.first().map(String::as_str))
        .collect();
    ToolError::Failed(format!(
        "no element matches {sel:?} on this page; try one of: {}",
        known.join(", ")
    ))
}
