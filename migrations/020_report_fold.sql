-- Issue 31 item 3: a node report writes one row per user and day instead of two. The day's usage
-- (raw bytes, and the charge by source: time-package quota, trial and permanent traffic, overdraft)
-- moves into the day's spend record of the traffic ledger, which a report already updates; usage_days
-- stays as a view of those columns, so its readers (stats, tests) read what they read before.
--
-- A user whose reports of the day were all overdraft (nothing paid) used to have a usage row and no
-- spend record; they now have a spend record with traffic_change = exemption_traffic = 0. Such a
-- record never existed before (a paid report always moves one of the two), and the record lists
-- (流量记录, 全部流量记录) leave it out (src/modules/traffic/service.ts, admin.ts).
ALTER TABLE traffic_records ADD COLUMN upload INTEGER NOT NULL DEFAULT 0;
ALTER TABLE traffic_records ADD COLUMN download INTEGER NOT NULL DEFAULT 0;
ALTER TABLE traffic_records ADD COLUMN quota INTEGER NOT NULL DEFAULT 0;
ALTER TABLE traffic_records ADD COLUMN permanent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE traffic_records ADD COLUMN overdraft INTEGER NOT NULL DEFAULT 0;

UPDATE traffic_records SET upload = d.upload, download = d.download, quota = d.quota,
    permanent = d.permanent, overdraft = d.overdraft
  FROM usage_days d
  WHERE traffic_records.type = 'spend' AND d.user_id = traffic_records.user_id AND d.day = traffic_records.day;
INSERT INTO traffic_records (user_id, type, "desc", all_traffic, all_spend, day, update_time,
    upload, download, quota, permanent, overdraft)
  SELECT d.user_id, 'spend', '节点流量', 0, 0, d.day, 0, d.upload, d.download, d.quota, d.permanent, d.overdraft
  FROM usage_days d
  WHERE NOT EXISTS (SELECT 1 FROM traffic_records r WHERE r.type = 'spend' AND r.user_id = d.user_id AND r.day = d.day);
DROP TABLE usage_days;

CREATE VIEW usage_days AS
  SELECT day, user_id, upload, download, quota, permanent, overdraft FROM traffic_records WHERE type = 'spend';
-- PostgreSQL updates such a view by itself; SQLite needs to be told how.
CREATE TRIGGER usage_days_update INSTEAD OF UPDATE ON usage_days
BEGIN
  UPDATE traffic_records SET upload = NEW.upload, download = NEW.download, quota = NEW.quota,
      permanent = NEW.permanent, overdraft = NEW.overdraft
    WHERE type = 'spend' AND user_id = OLD.user_id AND day = OLD.day;
END;
