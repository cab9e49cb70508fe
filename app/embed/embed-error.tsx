/** What an iframe shows when its embed token does not open the page. */
export function EmbedError({ message }: { message: string }) {
  return (
    <main className="flex min-h-screen items-center justify-center bg-slate-950 px-6 text-center">
      <div>
        <p className="text-lg font-semibold text-white">This editor link cannot be opened</p>
        <p role="alert" className="mt-2 max-w-md text-sm text-slate-400">
          {message}
        </p>
      </div>
    </main>
  );
}
