/** 特殊权限 on the profile (seed 000 §2): the first 3, and a toggle to show all or collapse. */
import { useId, useState } from "react";
import type { PermissionGrant } from "../../../src/modules/user/schema.ts";
import { formatDate } from "../format.ts";

/** How many grants show before 显示全部. */
export const PERMISSIONS_SHOWN = 3;
export const PERMISSIONS_EMPTY = "暂无特殊权限";

export function PermissionList({ grants }: { grants: readonly PermissionGrant[] }) {
  const [all, setAll] = useState(false);
  const listId = useId();
  if (grants.length === 0) return <p className="card-note profile-empty">{PERMISSIONS_EMPTY}</p>;
  const shown = all ? grants : grants.slice(0, PERMISSIONS_SHOWN);
  return (
    <>
      <ul className="profile-permissions" id={listId} aria-label="特殊权限列表">
        {shown.map((grant) => (
          <li key={grant.id} className="profile-permission">
            <div className="profile-permission-text">
              <span className="profile-permission-name">{grant.name}</span>
              {grant.desc ? <span className="profile-permission-desc">{grant.desc}</span> : null}
            </div>
            <span className="badge badge-muted">到期 {formatDate(grant.expireTime)}</span>
          </li>
        ))}
      </ul>
      {grants.length > PERMISSIONS_SHOWN ? (
        <button
          type="button"
          className="btn btn-ghost btn-small profile-more"
          aria-expanded={all}
          aria-controls={listId}
          onClick={() => setAll(!all)}
        >
          {all ? "收起" : `显示全部（${grants.length}）`}
        </button>
      ) : null}
    </>
  );
}
