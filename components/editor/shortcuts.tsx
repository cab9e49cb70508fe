"use client";
/** The keyboard shortcuts help (?), CVAT's keys where CVAT has one. */

export const SHORTCUTS: Array<[string, string]> = [
  ["F / →", "next frame (Shift: 10 frames)"],
  ["D / ←", "previous frame (Shift: 10 frames)"],
  ["Space", "play / pause"],
  ["K", "keyframe the selected track here"],
  ["I / O", "start / end the selected track here"],
  ["R / E", "next / previous keyframe"],
  ["N", "draw a box (Esc to stop)"],
  ["H", "redact the selected track or not"],
  ["U", "next track to review (not reviewed or low score)"],
  ["Del", "delete the selected track"],
  ["Ctrl+Z", "undo (one step per drag)"],
  ["Ctrl+Shift+Z / Ctrl+Y", "redo"],
  ["Esc", "cancel a drag or resize in progress"],
  ["Ctrl+S", "save"],
  ["?", "this help"],
];

export function ShortcutsHelp({ onClose }: { onClose(): void }) {
  return (
    <div className="fixed inset-0 z-50 flex items-center justify-center bg-black/60" onClick={onClose}>
      <div role="dialog" aria-label="Keyboard shortcuts" className="w-[28rem] rounded-xl bg-slate-900 p-5 text-sm shadow-xl ring-1 ring-slate-700" onClick={(e) => e.stopPropagation()}>
        <div className="mb-3 flex items-center">
          <h2 className="text-base font-semibold text-white">Keyboard shortcuts</h2>
          <button type="button" className="ml-auto text-xl leading-none text-slate-400 hover:text-white" onClick={onClose} aria-label="Close">
            ×
          </button>
        </div>
        <table className="w-full">
          <tbody>
            {SHORTCUTS.map(([key, what]) => (
              <tr key={key} className="border-t border-slate-800">
                <td className="py-1.5 pr-3 font-mono text-xs whitespace-nowrap text-slate-100">{key}</td>
                <td className="py-1.5 text-slate-300">{what}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
