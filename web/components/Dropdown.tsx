import {
  type KeyboardEvent as ReactKeyboardEvent,
  type MouseEvent as ReactMouseEvent,
  type ReactNode,
  useEffect,
  useId,
  useRef,
} from "react";

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
  /**
   * The panel is a menu of actions (WAI-ARIA menu button): role="menu" over the children marked
   * with `menuItemProps`; opening focuses the first item (ArrowUp on the button: the last),
   * ArrowDown / ArrowUp / Home / End move among them, choosing one closes the menu.
   */
  menu?: boolean;
}

/** Spread on each action of a `menu` dropdown: a menu item, reached with the arrow keys rather than Tab. */
export const menuItemProps = { role: "menuitem", tabIndex: -1 } as const;

const ITEM_SELECTOR = '[role="menuitem"]:not([aria-disabled="true"])';

const menuItems = (panel: HTMLElement | null) => [
  ...(panel?.querySelectorAll<HTMLElement>(ITEM_SELECTOR) ?? []),
];

/** The key that moves focus among the items, and where to: the index of the item to focus. */
function itemIndexFor(key: string, current: number, count: number): number | undefined {
  switch (key) {
    case "ArrowDown":
      return current < 0 ? 0 : (current + 1) % count;
    case "ArrowUp":
      return current < 0 ? count - 1 : (current - 1 + count) % count;
    case "Home":
      return 0;
    case "End":
      return count - 1;
    default:
      return undefined;
  }
}

/**
 * A button that toggles a floating panel. Any click outside it (anywhere in the document) and
 * Esc close it, so two dropdowns driven by one piece of state are mutually exclusive; Esc, and
 * choosing a menu item, give the focus back to the button.
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
  menu = false,
}: DropdownProps) {
  const id = useId();
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const panel = useRef<HTMLDivElement>(null);
  /** Which item opening focuses: the first, or the last after ArrowUp on the button. */
  const focusOnOpen = useRef<"first" | "last">("first");
  const change = useRef(onOpenChange);
  change.current = onOpenChange;

  useEffect(() => {
    if (!open) return;
    if (menu) {
      const all = menuItems(panel.current);
      (focusOnOpen.current === "last" ? all[all.length - 1] : all[0])?.focus();
      focusOnOpen.current = "first";
    }
    const onDocClick = (event: MouseEvent) => {
      if (root.current && !root.current.contains(event.target as Node)) change.current(false);
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== "Escape") return;
      // Esc with the focus in the dropdown gives it back to the button; elsewhere it only closes.
      if (root.current?.contains(document.activeElement)) button.current?.focus();
      change.current(false);
    };
    document.addEventListener("click", onDocClick);
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("click", onDocClick);
      document.removeEventListener("keydown", onKey);
    };
  }, [open, menu]);

  const onTriggerKeyDown = (event: ReactKeyboardEvent) => {
    if (!menu || (event.key !== "ArrowDown" && event.key !== "ArrowUp")) return;
    event.preventDefault();
    if (open) {
      const all = menuItems(panel.current);
      all[event.key === "ArrowUp" ? all.length - 1 : 0]?.focus();
      return;
    }
    focusOnOpen.current = event.key === "ArrowUp" ? "last" : "first";
    onOpenChange(true);
  };

  const onPanelKeyDown = (event: ReactKeyboardEvent) => {
    if (!menu) return;
    if (event.key === "Tab") {
      // Tab leaves the menu: from the button, so it lands on what follows (or precedes) it.
      button.current?.focus();
      onOpenChange(false);
      return;
    }
    const all = menuItems(panel.current);
    const next = itemIndexFor(event.key, all.indexOf(document.activeElement as HTMLElement), all.length);
    if (next === undefined || all.length === 0) return;
    event.preventDefault();
    all[next]?.focus();
  };

  // Choosing an item closes the menu with the focus on the button, before whatever the item
  // opens (a dialog) takes it: the dialog then gives it back to the button, not to <body>.
  const onPanelClick = (event: ReactMouseEvent) => {
    if (!menu || !(event.target as Element).closest(ITEM_SELECTOR)) return;
    button.current?.focus();
    onOpenChange(false);
  };

  return (
    <div ref={root} className={`dropdown${className ? ` ${className}` : ""}`}>
      <button
        ref={button}
        type="button"
        id={`${id}-button`}
        className={triggerClassName ?? "dropdown-trigger"}
        aria-haspopup={menu ? "menu" : "true"}
        aria-expanded={open}
        aria-controls={open ? `${id}-panel` : undefined}
        aria-label={label}
        onClick={() => onOpenChange(!open)}
        onKeyDown={onTriggerKeyDown}
      >
        {trigger}
      </button>
      {open ? (
        // biome-ignore lint/a11y/noStaticElementInteractions: the keys and clicks handled here are the menu's items'; the panel itself takes none when it is not a menu
        <div
          ref={panel}
          id={`${id}-panel`}
          className={`dropdown-panel dropdown-${align}`}
          {...(menu ? { role: "menu", "aria-labelledby": `${id}-button` } : {})}
          onKeyDown={onPanelKeyDown}
          onClick={onPanelClick}
        >
          {children}
        </div>
      ) : null}
    </div>
  );
}
