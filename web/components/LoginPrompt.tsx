import type { ReactNode } from "react";

/** A page's card for a visitor who is not logged in: what logging in gives, 登录 and `children`. */
export function LoginPrompt({
  title,
  note,
  children,
}: {
  title?: string;
  note?: string;
  children?: ReactNode;
}) {
  return (
    <section className="card login-prompt">
      {title ? <h2 className="card-title">{title}</h2> : null}
      {note ? <p className="card-note">{note}</p> : null}
      <div className="result-actions">
        <a className="btn btn-primary" href="#/login">
          登录
        </a>
        {children}
      </div>
    </section>
  );
}
