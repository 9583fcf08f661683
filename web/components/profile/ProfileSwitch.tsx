/**
 * One profile toggle: its label, a ? button whose explanation opens on click, and an on/off
 * switch. The explanation closes on any click on the page (itself included, except its own ?
 * button, which toggles it) and on Esc (seed 000 §2: tooltips open on click, close on any click).
 */
import { type RefObject, useEffect, useId, useRef } from "react";

export interface ProfileSwitchProps {
  label: string;
  /** What turning it on changes, shown by the ? button. */
  help: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  helpOpen: boolean;
  onHelpOpenChange: (open: boolean) => void;
}

/** Closes an open explanation on any click but one on its own button, and on Esc. */
function useCloseOnAnyClick(open: boolean, button: RefObject<HTMLButtonElement | null>, close: () => void) {
  const closeRef = useRef(close);
  closeRef.current = close;
  useEffect(() => {
    if (!open) return;
    const onClick = (event: MouseEvent) => {
      if (!button.current?.contains(event.target as Node)) closeRef.current();
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "Escape") closeRef.current();
    };
    document.addEventListener("click", onClick);
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("click", onClick);
      document.removeEventListener("keydown", onKey);
    };
  }, [open, button]);
}

export function ProfileSwitch({
  label,
  help,
  checked,
  onChange,
  helpOpen,
  onHelpOpenChange,
}: ProfileSwitchProps) {
  const id = useId();
  const helpId = `${id}-help`;
  const button = useRef<HTMLButtonElement>(null);
  useCloseOnAnyClick(helpOpen, button, () => onHelpOpenChange(false));
  return (
    <div className="profile-switch">
      <div className="profile-switch-label">
        <label htmlFor={id}>{label}</label>
        <button
          ref={button}
          type="button"
          className="profile-help-button"
          aria-label={`${label}说明`}
          aria-expanded={helpOpen}
          aria-controls={helpOpen ? helpId : undefined}
          aria-describedby={helpOpen ? helpId : undefined}
          onClick={() => onHelpOpenChange(!helpOpen)}
        >
          ?
        </button>
      </div>
      {helpOpen ? (
        <p className="profile-help-text" id={helpId}>
          {help}
        </p>
      ) : null}
      <input
        id={id}
        className="profile-switch-input"
        type="checkbox"
        role="switch"
        checked={checked}
        aria-checked={checked}
        onChange={(event) => onChange(event.target.checked)}
      />
    </div>
  );
}
