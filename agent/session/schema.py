"""The database schema, as migrations (used only by agent/session/store/), and the
active-path query, which session/peek.py shares (standard library only: no imports)."""

from __future__ import annotations

# Each entry upgrades the schema by one version; never edit a released entry, append.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL DEFAULT '',
        cwd TEXT NOT NULL DEFAULT '',
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        head_id TEXT,
        model TEXT NOT NULL DEFAULT '',
        parent_session_id TEXT
    );
    CREATE INDEX sessions_cwd_updated ON sessions (cwd, updated_at);
    CREATE TABLE messages (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        parent_id TEXT,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        content TEXT,
        tool_calls TEXT,
        tool_call_id TEXT,
        tool_name TEXT,
        created_at INTEGER NOT NULL,
        status TEXT NOT NULL DEFAULT 'ok',
        kind TEXT NOT NULL DEFAULT 'message',
        meta TEXT
    );
    CREATE INDEX messages_session_seq ON messages (session_id, seq);
    CREATE INDEX messages_parent ON messages (parent_id);
    """,
    # File checkpoints: each change a tool made, with content-addressed before/after bytes.
    """
    CREATE TABLE blobs (
        hash TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        data BLOB NOT NULL
    );
    CREATE TABLE file_changes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        message_id TEXT NOT NULL,
        path TEXT NOT NULL,
        before_hash TEXT,
        after_hash TEXT,
        created_at INTEGER NOT NULL
    );
    CREATE INDEX file_changes_session ON file_changes (session_id, id);
    """,
    # Budget events (seed 001 §9): each condense and smart truncation, with its numbers.
    """
    CREATE TABLE context_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        created_at INTEGER NOT NULL,
        action TEXT NOT NULL,
        trigger TEXT NOT NULL,
        outcome TEXT NOT NULL,
        tokens_before INTEGER NOT NULL,
        tokens_after INTEGER NOT NULL,
        duration_ms INTEGER NOT NULL DEFAULT 0,
        summary_id TEXT,
        error TEXT,
        detail TEXT
    );
    CREATE INDEX context_events_session ON context_events (session_id, id);
    """,
    # "Latest session" is the newest `updated_at`, but two writes can share a millisecond:
    # `touched` is a database-wide counter, bumped by every write that sets `updated_at`, so
    # the session written last wins a tie (`rowid` would pick the one created last instead).
    # Existing rows get their rowid, which keeps the order they had.
    """
    ALTER TABLE sessions ADD COLUMN touched INTEGER NOT NULL DEFAULT 0;
    UPDATE sessions SET touched = rowid;
    CREATE INDEX sessions_touched ON sessions (touched);
    """,
    # The request sent last in each session, exactly as it went out (messages with cache
    # breakpoints, tools, parameters; zlib-compressed JSON), for `/context` and
    # `cairn context`. One row per session, replaced by every request: it is derived (the
    # history and its request records rebuild it), so keeping more would only cost disk.
    """
    CREATE TABLE sent_requests (
        session_id TEXT PRIMARY KEY,
        sent_at INTEGER NOT NULL,
        model TEXT NOT NULL,
        body BLOB NOT NULL
    );
    """,
    # A subagent's conversation is a session of its own (agent/subagents/): `agent` names its
    # definition and `parent_call_id` the parent's tool call that ran it (`parent_session_id`
    # is the parent). Lists of sessions show only sessions without `agent` at the top.
    """
    ALTER TABLE sessions ADD COLUMN agent TEXT;
    ALTER TABLE sessions ADD COLUMN parent_call_id TEXT;
    CREATE INDEX sessions_parent ON sessions (parent_session_id);
    """,
    # What the user was told during a turn (an error, a notice, a hook's action): never part
    # of a request, so not a message; `after_id` is the message it followed (NULL: the session
    # had none yet), which puts it back in its place when the history is shown again.
    """
    CREATE TABLE notices (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        after_id TEXT,
        created_at INTEGER NOT NULL,
        kind TEXT NOT NULL,
        source TEXT NOT NULL,
        text TEXT NOT NULL
    );
    CREATE INDEX notices_session ON notices (session_id, id);
    """,
    # The git worktrees `cairn --worktree NAME` made (agent/session/worktrees.py): a session
    # whose `cwd` is at or under `path` ran on that worktree (`cairn session list` says which).
    # A removed worktree keeps its row (`removed_at`), so its sessions still say where they ran.
    """
    CREATE TABLE worktrees (
        path TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        branch TEXT NOT NULL,
        repo TEXT NOT NULL,
        repo_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        removed_at INTEGER
    );
    CREATE INDEX worktrees_repo_name ON worktrees (repo_id, name);
    """,
]

# Newest first, as `--continue`, the picker and `cairn session list` mean it (store and peek).
LATEST_FIRST = "updated_at DESC, touched DESC, rowid DESC"
# The next `touched` value; run inside the write transaction that sets `updated_at`.
NEXT_TOUCHED_SQL = "(SELECT COALESCE(MAX(touched), 0) + 1 FROM sessions)"


# Root → head chain of one session via parent_id, newest `limit` only (parameters: head id,
# session id, session id, limit − 1); `{columns}` of `messages` are selected, oldest first.
ACTIVE_PATH_SQL = """
    WITH RECURSIVE path(id, parent_id, depth) AS (
        SELECT id, parent_id, 0 FROM messages WHERE id = ? AND session_id = ?
        UNION ALL
        SELECT m.id, m.parent_id, path.depth + 1
        FROM messages m JOIN path ON m.id = path.parent_id
        WHERE m.session_id = ? AND path.depth < ?
    )
    SELECT {columns} FROM path JOIN messages ON messages.id = path.id ORDER BY path.depth DESC
"""
