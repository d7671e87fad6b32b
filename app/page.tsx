import Link from 'next/link';

export default function Home() {
  return (
    <main>
      <h1>Vouch</h1>
      <p>Workforce identity verification.</p>
      <ul>
        <li>
          <Link href="/docs">API reference</Link>
        </li>
        <li>
          <a href="/v1/openapi.json">OpenAPI document</a>
        </li>
      </ul>
    </main>
  );
}
