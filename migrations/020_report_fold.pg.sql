-- PostgreSQL twin of 020_report_fold.sql (the day's usage folded into the day's spend record).
ALTER TABLE traffic_records ADD COLUMN upload BIGINT NOT NULL DEFAULT 0;
ALTER TABLE traffic_records ADD COLUMN download BIGINT NOT NULL DEFAULT 0;
ALTER TABLE traffic_records ADD COLUMN quota BIGINT NOT NULL DEFAULT 0;
ALTER TABLE traffic_records ADD COLUMN permanent BIGINT NOT NULL DEFAULT 0;
ALTER TABLE traffic_records ADD COLUMN overdraft BIGINT NOT NULL DEFAULT 0;

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

-- A simple view: PostgreSQL updates it by itself (SQLite's twin has a trigger for that).
CREATE VIEW usage_days AS
  SELECT day, user_id, upload, download, quota, permanent, overdraft FROM traffic_records WHERE type = 'spend';

-- Every report rewrites each spend record of the day and each balances row: with room left on
-- their pages the new row versions stay on the page (HOT) and the indexes are not touched.
ALTER TABLE traffic_records SET (fillfactor = 70);
ALTER TABLE balances SET (fillfactor = 70);
