// Tailwind CSS v4 through PostCSS (Next.js picks this file up at build time).
export default { plugins: { "@tailwindcss/postcss": {} } };
