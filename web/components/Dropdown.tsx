import { type ReactNode, useEffect, useRef } from "react";

export interface DropdownProps {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  /** The toggle button's content. */
  trigger: ReactNode;
  /** Accessible name of the toggle button. */
  label: string;
  children: ReactNode;
  align?: "start" | "end";
  className?: string;
  triggerClassName?: string;
}

/**
 * A button that toggles a floating panel. Any click outside it (anywhere in the document) and
 * Esc close it, so two dropdowns driven by one piece of state are mutually exclusive.
 */
export function Dropdown({
  open,
  onOpenChange,
  trigger,
  label,
  children,
  align = "end",
  className,
  triggerClassName,
}: DropdownProps) {
  const root = useRef<HTMLDivElement>(null);
  const change = useRef(onOpenChange);
  change.current = onOpenChange;

  useEffect(() => {
    if (!open) return;
    const onDocClick = (event: MouseEvent) => {
      if (root.current && !root.current.contains(event.target as Node)) change.current(false);
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "Escape") change.current(false);
    };
    document.addEventListener("click", onDocClick);
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("click", onDocClick);
      document.removeEventListener("keydown", onKey);
    };
  }, [open]);

  return (
    <div ref={root} className={`dropdown${className ? ` ${className}` : ""}`}>
      <button
        type="button"
        className={triggerClassName ?? "dropdown-trigger"}
        aria-haspopup="true"
        aria-expanded={open}
        aria-label={label}
        onClick={() => onOpenChange(!open)}
      >
        {trigger}
      </button>
      {open ? <div className={`dropdown-panel dropdown-${align}`}>{children}</div> : null}
    </div>
  );
}
