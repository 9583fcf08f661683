import { type ReactNode, useEffect, useId, useRef, useState } from "react";
import { createPortal } from "react-dom";

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/** Open dialogs, innermost last: Esc and the focus trap act on the top one only. */
const stack: string[] = [];

/**
 * The control the user last acted on: focused, or clicked (Safari does not focus a clicked
 * button). It is a dialog's opener when the focus is nowhere (<body>) as the dialog opens: its
 * button was disabled while a request ran, or it was the item of a menu that has closed.
 */
let lastControl: HTMLElement | null = null;
const CONTROL = "a[href], button, input, select, textarea, [tabindex]";

function rememberControl(event: Event) {
  const control = (event.target as Element | null)?.closest?.(CONTROL);
  if (control instanceof HTMLElement) lastControl = control;
}

if (typeof document !== "undefined") {
  document.addEventListener("focusin", rememberControl, true);
  document.addEventListener("click", rememberControl, true);
}

/** Where the focus goes back to when the dialog closes: what had it, else the control last used. */
function openerOf(active: Element | null): HTMLElement | null {
  return active instanceof HTMLElement && active !== document.body ? active : lastControl;
}

export interface DialogProps {
  open: boolean;
  onClose: () => void;
  title: ReactNode;
  children: ReactNode;
  /** Buttons row at the bottom. */
  footer?: ReactNode;
  /** Clicking the dimmed backdrop closes (default true). */
  closeOnBackdrop?: boolean;
  size?: "sm" | "md" | "lg";
  className?: string;
}

/**
 * An accessible modal: role=dialog, aria-modal, labelled by its title, Esc closes, focus kept
 * inside and given back to the control that opened it.
 */
/**
 * True while the open dialog's body is taller than its box, i.e. it scrolls: then the body is a tab
 * stop, so the arrow keys can scroll a body with nothing focusable in it (WCAG 2.1.1; axe
 * scrollable-region-focusable), as Table does for a table that scrolls sideways.
 */
function useScrollsDown(open: boolean) {
  const ref = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const element = ref.current;
    if (!open || !element) return;
    const check = () => setScrolls(element.scrollHeight > element.clientHeight);
    const resized = new ResizeObserver(check);
    resized.observe(element);
    // Content that arrives later (a lazy chart, a list that loads) changes the height inside the box.
    const changed = new MutationObserver(check);
    changed.observe(element, { childList: true, subtree: true });
    check();
    return () => {
      resized.disconnect();
      changed.disconnect();
    };
  }, [open]);
  return [ref, scrolls] as const;
}

export function Dialog({
  open,
  onClose,
  title,
  children,
  footer,
  closeOnBackdrop = true,
  size = "md",
  className,
}: DialogProps) {
  const id = useId();
  const panel = useRef<HTMLDivElement>(null);
  const closeRef = useRef(onClose);
  closeRef.current = onClose;
  const [body, bodyScrolls] = useScrollsDown(open);

  useEffect(() => {
    if (!open) return;
    const opener = openerOf(document.activeElement);
    stack.push(id);
    document.body.classList.add("modal-open");
    const node = panel.current;
    // Focus goes to an element marked data-autofocus, else to the dialog itself (Tab then walks in).
    (node?.querySelector<HTMLElement>("[data-autofocus]") ?? node)?.focus();

    const onKey = (event: KeyboardEvent) => {
      if (stack[stack.length - 1] !== id || !node) return;
      if (event.key === "Escape") {
        event.preventDefault();
        closeRef.current();
      } else if (event.key === "Tab") {
        const items = [...node.querySelectorAll<HTMLElement>(FOCUSABLE)];
        if (items.length === 0) {
          event.preventDefault();
          return;
        }
        const firstItem = items[0] as HTMLElement;
        const lastItem = items[items.length - 1] as HTMLElement;
        if (event.shiftKey && (document.activeElement === firstItem || document.activeElement === node)) {
          event.preventDefault();
          lastItem.focus();
        } else if (!event.shiftKey && document.activeElement === lastItem) {
          event.preventDefault();
          firstItem.focus();
        }
      }
    };
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("keydown", onKey);
      const at = stack.indexOf(id);
      if (at >= 0) stack.splice(at, 1);
      if (stack.length === 0) document.body.classList.remove("modal-open");
      if (opener?.isConnected) opener.focus();
    };
  }, [open, id]);

  if (!open) return null;
  return createPortal(
    // biome-ignore lint/a11y/noStaticElementInteractions: backdrop click is a mouse convenience; Esc and the close button serve the keyboard
    <div
      className="dialog-backdrop"
      role="presentation"
      onMouseDown={(event) => {
        if (closeOnBackdrop && event.target === event.currentTarget) onClose();
      }}
    >
      <div
        ref={panel}
        className={`dialog dialog-${size}${className ? ` ${className}` : ""}`}
        role="dialog"
        aria-modal="true"
        aria-labelledby={`${id}-title`}
        tabIndex={-1}
      >
        <div className="dialog-head">
          <h2 id={`${id}-title`} className="dialog-title">
            {title}
          </h2>
          <button type="button" className="icon-button dialog-x" aria-label="关闭" onClick={onClose}>
            ×
          </button>
        </div>
        <div
          ref={body}
          className="dialog-body"
          {...(bodyScrolls ? { tabIndex: 0, role: "region", "aria-labelledby": `${id}-title` } : {})}
        >
          {children}
        </div>
        {footer ? <div className="dialog-foot">{footer}</div> : null}
      </div>
    </div>,
    document.body,
  );
}
