//! The code-search demo's tiny embedded corpus: two repositories, each a linear history of
//! commits whose changes set a file's full text (or delete it with `None`), plus branches.
//! Data only.

pub struct Commit {
    pub sha: &'static str,
    pub author: &'static str,
    pub date: &'static str,
    pub message: &'static str,
    pub changes: &'static [(&'static str, Option<&'static str>)],
}

pub struct Repo {
    pub name: &'static str,
    pub language: &'static str,
    pub description: &'static str,
    pub default_branch: &'static str,
    /// Oldest first; each commit's parent is the one before it.
    pub commits: &'static [Commit],
    /// Branch name and the index of the commit it points at.
    pub branches: &'static [(&'static str, usize)],
}

const REFUND_V1: &str = "//! Refunds: full and partial, in minor units.\n\nuse crate::money::Money;\n\npub const MAX_REFUND_DAYS: u32 = 90;\n\npub fn full_refund(paid: Money) -> Money {\n    paid\n}\n\npub fn partial_refund(paid: Money, percent: u32) -> Money {\n    Money(paid.0 * percent as i64 / 100)\n}\n";
const REFUND_V2: &str = "//! Refunds: full and partial, in minor units.\n\nuse crate::money::Money;\n\npub const MAX_REFUND_DAYS: u32 = 90;\n\npub fn full_refund(paid: Money) -> Money {\n    paid\n}\n\n/// Rounds down so we never refund more than was paid.\npub fn partial_refund(paid: Money, percent: u32) -> Money {\n    let percent = percent.min(100) as i64;\n    Money(paid.0 * percent / 100)\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn partial_refund_rounds_down() {\n        assert_eq!(partial_refund(Money(999), 50), Money(499));\n    }\n}\n";
const MONEY: &str = "//! Amounts of money in minor units (cents).\n\n#[derive(Debug, Clone, Copy, PartialEq, Eq)]\npub struct Money(pub i64);\n\nimpl Money {\n    pub fn add(self, other: Money) -> Money {\n        Money(self.0 + other.0)\n    }\n}\n";
const LIB_V1: &str = "pub mod money;\npub mod refund;\n";
const LIB_V2: &str = "pub mod invoice;\npub mod money;\npub mod refund;\n";
const INVOICE: &str = "//! Invoices: lines, totals, and the ledger entry they post.\n\nuse crate::money::Money;\n\npub struct Invoice {\n    pub id: String,\n    pub lines: Vec<(String, Money)>,\n}\n\nimpl Invoice {\n    pub fn total(&self) -> Money {\n        self.lines.iter().fold(Money(0), |acc, (_, m)| acc.add(*m))\n    }\n}\n";
const README_PAY: &str =
    "# payments\n\nRefunds and invoices for the Example Shop. Run `cargo test`.\n";

const CART_V1: &str = "// Shopping cart state for the web shop.\nimport { formatPrice } from './format';\n\nexport class Cart {\n  items: { id: string; cents: number }[] = [];\n\n  add(id: string, cents: number) {\n    this.items.push({ id, cents });\n  }\n\n  total(): string {\n    return formatPrice(this.items.reduce((s, i) => s + i.cents, 0));\n  }\n}\n";
const CART_V2: &str = "// Shopping cart state for the web shop.\nimport { formatPrice } from './format';\n\nexport const MAX_CART_ITEMS = 50;\n\nexport class Cart {\n  items: { id: string; cents: number }[] = [];\n\n  add(id: string, cents: number) {\n    if (this.items.length >= MAX_CART_ITEMS) throw new Error('cart is full');\n    this.items.push({ id, cents });\n  }\n\n  total(): string {\n    return formatPrice(this.items.reduce((s, i) => s + i.cents, 0));\n  }\n}\n";
const FORMAT: &str = "// Price formatting.\nexport function formatPrice(cents: number): string {\n  return `$${(cents / 100).toFixed(2)}`;\n}\n";
const CHECKOUT: &str = "// Checkout: turns a cart into an order.\nimport { Cart } from './cart';\nimport { formatPrice } from './format';\n\nexport function checkout(cart: Cart): string {\n  if (cart.items.length === 0) throw new Error('cart is empty');\n  return `order placed: ${cart.total()}`;\n}\n\nexport function summary(cart: Cart): string {\n  return cart.items.map((i) => `${i.id} ${formatPrice(i.cents)}`).join('\\n');\n}\n";

pub const REPOS: &[Repo] = &[
    Repo {
        name: "acme/payments",
        language: "rust",
        description: "Refunds and invoices",
        default_branch: "main",
        commits: &[
            Commit {
                sha: "a1f3c9e0b7d24c6e8f00112233445566778899aa",
                author: "priya@example.com",
                date: "2026-10-02T09:14:00Z",
                message: "Initial refund module",
                changes: &[
                    ("README.md", Some(README_PAY)),
                    ("src/lib.rs", Some(LIB_V1)),
                    ("src/money.rs", Some(MONEY)),
                    ("src/refund.rs", Some(REFUND_V1)),
                ],
            },
            Commit {
                sha: "b2e4d8f1c3a5476890abcdef0123456789abcdef",
                author: "sam@example.com",
                date: "2026-10-20T15:40:00Z",
                message: "Add invoices with totals",
                changes: &[
                    ("src/lib.rs", Some(LIB_V2)),
                    ("src/invoice.rs", Some(INVOICE)),
                ],
            },
            Commit {
                sha: "c3d5e7f9a1b2436587a9b8c7d6e5f40312233445",
                author: "alex@example.com",
                date: "2026-11-12T11:05:00Z",
                message: "Clamp partial refunds to 100% and test rounding",
                changes: &[("src/refund.rs", Some(REFUND_V2))],
            },
        ],
        branches: &[("main", 2), ("release-1.0", 1)],
    },
    Repo {
        name: "acme/web",
        language: "typescript",
        description: "The Example Shop web front end",
        default_branch: "main",
        commits: &[
            Commit {
                sha: "d4c6b8a0e2f14357698badcfe1032547698badcf",
                author: "jordan@example.com",
                date: "2026-09-15T08:30:00Z",
                message: "Cart and price formatting",
                changes: &[
                    ("src/cart.ts", Some(CART_V1)),
                    ("src/format.ts", Some(FORMAT)),
                ],
            },
            Commit {
                sha: "e5f7a9b1c3d54e6f708192a3b4c5d6e7f8091a2b",
                author: "jordan@example.com",
                date: "2026-10-28T17:12:00Z",
                message: "Checkout flow",
                changes: &[("src/checkout.ts", Some(CHECKOUT))],
            },
            Commit {
                sha: "f6a8b0c2d4e65f7081920a1b2c3d4e5f60718293",
                author: "alex@example.com",
                date: "2026-11-20T10:45:00Z",
                message: "Limit carts to 50 items",
                changes: &[("src/cart.ts", Some(CART_V2))],
            },
        ],
        branches: &[("main", 2), ("checkout-v2", 1)],
    },
];
