-- description: P-/X-Chain balances and C-Chain atomic memory of each configured address by category and asset, one row per balance per snapshot (as of now, and as of the end of primary.balancesAsOf).
-- unique: balance_id, snapshot_at
-- incremental: true
-- not_null: chain, address, as_of, category, asset_id, amount, utxo_count
-- column: balance_id: the balance's identity: chain/address/as_of/category/asset_id, then shared_with_chain_id where there is one
-- column: network: mainnet or fuji
-- column: chain: p-chain, x-chain or c-chain, the chain asked
-- column: address: the configured address, as the pipeline lists it
-- column: as_of: latest, or the UTC date (YYYY-MM-DD) whose end the balance was asked at
-- column: category: the member of the answer it came from (unlockedUnstaked, unlockedStaked, pendingStaked, atomicMemoryUnlocked, the X-Chain's unlocked, …)
-- column: asset_id: the asset
-- column: asset_name: the asset's name
-- column: asset_symbol: the asset's symbol
-- column: asset_denomination: the asset's decimals
-- column: asset_type: the asset's output type (secp256k1, nft)
-- column: amount: the amount in the asset's smallest unit (nAVAX for AVAX)
-- column: utxo_count: UTXOs the amount is made of
-- column: shared_with_chain_id: for atomic memory, the chain it is shared with
-- column: status: for atomic memory, pendingImport or pendingExport, as the API gives it
-- column: snapshot_at: when avalake observed it (one time per run)
-- column: extracted_at: when avalake wrote the row
with source as not materialized (
    select * from {{ lake('primary_balances') }}
),

keyed as not materialized (
    select
        *,
        concat_ws('/', chain, address, asOfDay, category, assetId, sharedWithChainId) as balance_id
    from source
),

newest as (
    select * from {{ newest('keyed', 'balance_id, _snapshot_at') }}
),

final as (
    select
        balance_id,
        network,
        chain,
        address,
        asOfDay as as_of,
        category,
        assetId as asset_id,
        "name" as asset_name,
        symbol as asset_symbol,
        denomination as asset_denomination,
        "type" as asset_type,
        amount,
        utxoCount as utxo_count,
        sharedWithChainId as shared_with_chain_id,
        status,
        _snapshot_at as snapshot_at,
        _extracted_at as extracted_at
    from newest
)

select * from final
