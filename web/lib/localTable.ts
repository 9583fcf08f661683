/**
 * The seed's small local browser tables (loginRecords, couponRecords: auto id + fields), kept in
 * localStorage as JSON arrays. Storage failures (private mode, quota) degrade to an empty table.
 */
export interface LocalRow {
  id: number;
}

export function localTable<T extends object>(name: string) {
  const read = (): (T & LocalRow)[] => {
    try {
      const parsed: unknown = JSON.parse(localStorage.getItem(name) ?? "[]");
      return Array.isArray(parsed) ? (parsed as (T & LocalRow)[]) : [];
    } catch {
      return [];
    }
  };
  return {
    all: read,
    count: () => read().length,
    add(row: T): number {
      const rows = read();
      const id = rows.reduce((max, r) => Math.max(max, r.id), 0) + 1;
      rows.push({ ...row, id });
      try {
        localStorage.setItem(name, JSON.stringify(rows.slice(-200)));
      } catch {
        // storage unavailable: the record is best effort
      }
      return id;
    },
  };
}

export const loginRecords = localTable<{ time: number }>("loginRecords");
export const couponRecords = localTable<{ code: string; time: number }>("couponRecords");

export const ALREADY_JUMP_TO_REGISTER = "alreadyJumpToRegister";

export function getFlag(name: string): boolean {
  try {
    return localStorage.getItem(name) !== null;
  } catch {
    return false;
  }
}

export function setFlag(name: string): void {
  try {
    localStorage.setItem(name, "1");
  } catch {
    // ignore
  }
}
