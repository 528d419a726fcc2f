//! The demo drive and its twelve `drive_*` tools: files and folders with text content, a trash,
//! and per-person sharing (owner, writer, commenter, reader).

use serde_json::{Value, json};
use time::OffsetDateTime;

use super::{Args, State, ToolError, ToolOut, ToolResult, USER, at, fail, page, time_arg};
use crate::clock::fmt;

pub const FOLDER: &str = "application/vnd.folder";
/// The root folder's id.
pub const ROOT: &str = "root";

#[derive(Debug, Clone)]
pub struct File {
    pub id: String,
    pub name: String,
    pub mime: String,
    pub parent: String,
    pub content: String,
    pub owner: String,
    pub modified: String,
    pub trashed: bool,
    pub shared: Vec<(String, String)>,
}

pub struct Drive {
    pub files: Vec<File>,
}

impl Drive {
    pub fn seeded(now: OffsetDateTime) -> Drive {
        let seed = [
            ("fld_team", "Team", FOLDER, ROOT, "", -20000),
            (
                "doc_roadmap",
                "Q4 roadmap.md",
                "text/markdown",
                "fld_team",
                "# Q4 roadmap\n\n1. Ship partial refunds\n2. Migrate invoices to the new ledger\n3. Cut p99 checkout latency by 30%\n",
                -2000,
            ),
            (
                "doc_agenda",
                "Offsite agenda.md",
                "text/markdown",
                "fld_team",
                "# Offsite agenda\n\nDay 1: retro, roadmap\nDay 2: hack day\n",
                -1500,
            ),
            (
                "sheet_budget",
                "Budget 2026.csv",
                "text/csv",
                ROOT,
                "item,amount\ncloud,412.80\nlicences,120.00\ntravel,900.00\n",
                -9000,
            ),
            (
                "doc_notes",
                "Meeting notes.txt",
                "text/plain",
                ROOT,
                "Decisions: freeze the API on Dec 10. Owner of the ledger migration: Priya.\n",
                -600,
            ),
        ];
        let files = seed
            .iter()
            .map(|(id, name, mime, parent, content, minutes)| File {
                id: id.to_string(),
                name: name.to_string(),
                mime: mime.to_string(),
                parent: parent.to_string(),
                content: content.to_string(),
                owner: USER.into(),
                modified: at(now, *minutes),
                trashed: false,
                shared: if parent == &"fld_team" {
                    vec![("priya@example.com".into(), "writer".into())]
                } else {
                    vec![]
                },
            })
            .collect();
        Drive { files }
    }

    /// A live (not trashed) file or folder with this id exists.
    pub fn exists(&self, id: &str) -> bool {
        self.files.iter().any(|f| f.id == id && !f.trashed)
    }

    fn get(&self, id: &str) -> Result<&File, ToolError> {
        self.files
            .iter()
            .find(|f| f.id == id && !f.trashed)
            .ok_or_else(|| not_found(id))
    }

    fn get_mut(&mut self, id: &str) -> Result<&mut File, ToolError> {
        self.files
            .iter_mut()
            .find(|f| f.id == id && !f.trashed)
            .ok_or_else(|| not_found(id))
    }

    fn folder(&self, id: &str) -> Result<(), ToolError> {
        if id == ROOT {
            return Ok(());
        }
        match self.get(id)? {
            f if f.mime == FOLDER => Ok(()),
            f => fail(format!("{:?} ({id}) is a file, not a folder", f.name)),
        }
    }

    /// The ids of `id` and everything under it.
    fn subtree(&self, id: &str) -> Vec<String> {
        let mut out = vec![id.to_string()];
        let mut i = 0;
        while i < out.len() {
            let p = out[i].clone();
            out.extend(
                self.files
                    .iter()
                    .filter(|f| f.parent == p)
                    .map(|f| f.id.clone()),
            );
            i += 1;
        }
        out
    }
}

fn not_found(id: &str) -> ToolError {
    ToolError::Failed(format!(
        "no file or folder with id {id:?}; drive_list_files or drive_search_files show ids"
    ))
}

pub fn call(s: &mut State, op: &str, a: &Args) -> ToolResult {
    match op {
        "list_files" => {
            let folder = a.str("folder_id").unwrap_or(ROOT);
            s.drive.folder(folder)?;
            let mut list: Vec<&File> = s
                .drive
                .files
                .iter()
                .filter(|f| f.parent == folder && !f.trashed)
                .collect();
            match a.str("order_by").unwrap_or("name") {
                "modified" => list.sort_by(|x, y| y.modified.cmp(&x.modified)),
                "size" => list.sort_by_key(|f| std::cmp::Reverse(f.content.len())),
                _ => list.sort_by_key(|x| x.name.to_lowercase()),
            }
            let list: Vec<Value> = list.into_iter().map(meta).collect();
            let (files, next) = page(&list, a, 100)?;
            Ok(ToolOut::json(
                json!({"folder_id": folder, "files": files, "next_page_token": next}),
            ))
        }
        "search_files" => {
            let q = a.req("query")?.to_lowercase();
            let after = time_arg(a, "modified_after")?.map(fmt);
            let hits: Vec<Value> = s
                .drive
                .files
                .iter()
                .filter(|f| !f.trashed)
                .filter(|f| {
                    q.split_whitespace().all(|w| {
                        f.name.to_lowercase().contains(w) || f.content.to_lowercase().contains(w)
                    })
                })
                .filter(|f| a.str("mime_type").is_none_or(|m| f.mime == m))
                .filter(|f| a.str("owner").is_none_or(|o| f.owner == o))
                .filter(|f| after.as_ref().is_none_or(|t| f.modified > *t))
                .map(meta)
                .collect();
            Ok(ToolOut::json(
                json!({"query": a.req("query")?, "files": hits}),
            ))
        }
        "get_file_metadata" => Ok(ToolOut::json(meta(s.drive.get(a.req("file_id")?)?))),
        "read_file" => {
            let f = s.drive.get(a.req("file_id")?)?;
            if f.mime == FOLDER {
                return fail(format!("{:?} is a folder; use drive_list_files", f.name));
            }
            let max = a.int("max_bytes").map_or(usize::MAX, |n| n as usize);
            let mut end = max.min(f.content.len());
            while !f.content.is_char_boundary(end) {
                end -= 1;
            }
            Ok(ToolOut::json(
                json!({"file_id": f.id, "name": f.name, "mime_type": f.mime, "content": &f.content[..end], "truncated": end < f.content.len()}),
            ))
        }
        "upload_file" => {
            let mime = a.str("mime_type").unwrap_or("text/plain").to_string();
            let f = new_file(
                s,
                a.req("name")?,
                &mime,
                a.str("folder_id").unwrap_or(ROOT),
                a.req("content")?,
            )?;
            Ok(ToolOut::json(json!({"uploaded": meta(&f)})))
        }
        "create_folder" => {
            let f = new_file(
                s,
                a.req("name")?,
                FOLDER,
                a.str("parent_id").unwrap_or(ROOT),
                "",
            )?;
            Ok(ToolOut::json(json!({"created": meta(&f)})))
        }
        "move_file" => {
            let (id, to) = (a.req("file_id")?, a.req("folder_id")?);
            s.drive.folder(to)?;
            if s.drive.subtree(id).iter().any(|x| x == to) {
                return fail("cannot move a folder into itself or one of its subfolders");
            }
            let f = s.drive.get_mut(id)?;
            f.parent = to.into();
            Ok(ToolOut::json(json!({"moved": meta(f)})))
        }
        "rename_file" => {
            let f = s.drive.get_mut(a.req("file_id")?)?;
            f.name = a.req("new_name")?.into();
            Ok(ToolOut::json(json!({"renamed": meta(f)})))
        }
        "delete_file" => {
            let id = a.req("file_id")?;
            s.drive.get(id)?;
            let ids = s.drive.subtree(id);
            if a.bool("permanent") {
                s.drive.files.retain(|f| !ids.contains(&f.id));
            } else {
                s.drive
                    .files
                    .iter_mut()
                    .filter(|f| ids.contains(&f.id))
                    .for_each(|f| f.trashed = true);
            }
            Ok(ToolOut::json(
                json!({"deleted": ids, "permanent": a.bool("permanent")}),
            ))
        }
        "share_file" => {
            let (email, role) = (a.req("email")?.to_string(), a.req("role")?.to_string());
            let f = s.drive.get_mut(a.req("file_id")?)?;
            if email == f.owner {
                return fail(format!("{email} owns {:?} already", f.name));
            }
            f.shared.retain(|(e, _)| *e != email);
            f.shared.push((email.clone(), role.clone()));
            Ok(ToolOut::json(
                json!({"file_id": f.id, "shared_with": email, "role": role, "notified": a.0.get("notify").and_then(Value::as_bool).unwrap_or(true)}),
            ))
        }
        "list_permissions" => Ok(ToolOut::json(
            json!({"permissions": permissions(s.drive.get(a.req("file_id")?)?)}),
        )),
        "revoke_permission" => {
            let email = a.req("email")?;
            let f = s.drive.get_mut(a.req("file_id")?)?;
            if email == f.owner {
                return fail("the owner's access cannot be revoked");
            }
            let before = f.shared.len();
            f.shared.retain(|(e, _)| e != email);
            if f.shared.len() == before {
                return fail(format!("{email} has no access to {:?}", f.name));
            }
            Ok(ToolOut::json(
                json!({"revoked": email, "permissions": permissions(f)}),
            ))
        }
        _ => Err(ToolError::BadParams(format!("unknown tool: drive_{op}"))),
    }
}

fn new_file(
    s: &mut State,
    name: &str,
    mime: &str,
    parent: &str,
    content: &str,
) -> Result<File, ToolError> {
    s.drive.folder(parent)?;
    let prefix = if mime == FOLDER { "fld" } else { "file" };
    let (id, modified) = (s.id(prefix), s.tick());
    let f = File {
        id,
        name: name.into(),
        mime: mime.into(),
        parent: parent.into(),
        content: content.into(),
        owner: USER.into(),
        modified,
        trashed: false,
        shared: vec![],
    };
    s.drive.files.push(f.clone());
    Ok(f)
}

fn permissions(f: &File) -> Vec<Value> {
    std::iter::once(json!({"email": f.owner, "role": "owner"}))
        .chain(f.shared.iter().map(|(e, r)| json!({"email": e, "role": r})))
        .collect()
}

fn meta(f: &File) -> Value {
    json!({
        "id": f.id, "name": f.name, "mime_type": f.mime, "size": f.content.len(),
        "parent_id": f.parent, "owner": f.owner, "modified": f.modified,
        "shared_with": f.shared.iter().map(|(e, _)| e).collect::<Vec<_>>(),
    })
}
