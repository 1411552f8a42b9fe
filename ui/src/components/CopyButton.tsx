import { useEffect, useState } from "react";

/** Copies a value to the clipboard and says so for a moment (to screen readers too). */
export function CopyButton({ value, label = "Copy", className }: { value: string; label?: string; className?: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");

  useEffect(() => {
    if (state === "idle") return;
    const timer = setTimeout(() => setState("idle"), 2000);
    return () => clearTimeout(timer);
  }, [state]);

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setState("copied");
    } catch {
      // Clipboard access needs a secure context (https or localhost) and permission.
      setState("failed");
    }
  };

  return (
    <button type="button" className={className ? `copy-button ${className}` : "copy-button"} onClick={() => void copy()}>
      <span aria-live="polite">{state === "copied" ? "Copied" : state === "failed" ? "Copy failed: select and copy by hand" : label}</span>
    </button>
  );
}
