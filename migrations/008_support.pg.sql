-- PostgreSQL twin of 008_support.sql: the same schema (scripts/check-pg-schema.ts compares them).
-- Support and account (issue 13): uploaded images and tickets (seed 000 §2 Feedback, §3, §4).

-- One row per stored image. The file is <data>/uploads/<filename>; the name is made by the
-- server (32 random hex + the extension its bytes prove), so it is unguessable and safe as a path.
CREATE TABLE uploads (
  filename TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  content_type TEXT NOT NULL,
  create_time BIGINT NOT NULL
);
-- The per-account daily quota counts an account's rows since the start of the day.
CREATE INDEX uploads_user_time ON uploads (user_id, create_time);

-- A ticket is its opening message plus comments. status: open (waiting for support),
-- responsed (support answered last), close (closed by an admin; no more replies).
CREATE TABLE tickets (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  title TEXT NOT NULL,
  "desc" TEXT NOT NULL,
  image TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'responsed', 'close')),
  create_time BIGINT NOT NULL,
  update_time BIGINT NOT NULL,
  close_time BIGINT
);
CREATE INDEX tickets_user ON tickets (user_id, update_time);
CREATE INDEX tickets_status ON tickets (status, update_time);

CREATE TABLE ticket_comments (
  id TEXT PRIMARY KEY,
  ticket_id TEXT NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
  author TEXT NOT NULL CHECK (author IN ('USER', 'ADMIN')),
  author_id TEXT REFERENCES users (id) ON DELETE SET NULL,
  text TEXT NOT NULL,
  image TEXT NOT NULL DEFAULT '',
  create_time BIGINT NOT NULL
);
CREATE INDEX ticket_comments_ticket ON ticket_comments (ticket_id, create_time);
