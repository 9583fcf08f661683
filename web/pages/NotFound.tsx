import { useEffect } from "react";
import { go } from "../lib/nav.ts";
import { useSession } from "../session.ts";

/** Unknown (or not yet built) paths: redirect home when logged in, else to the login page. */
export function NotFoundPage() {
  const { ready, user } = useSession();
  useEffect(() => {
    if (ready) go(user ? "/" : "/login", { replace: true });
  }, [ready, user]);
  return (
    <div className="page page-narrow">
      <section className="card result-card">
        <div className="result" role="status">
          <h1 className="result-title">页面不存在</h1>
          <p className="result-text">正在跳转…</p>
        </div>
      </section>
    </div>
  );
}
