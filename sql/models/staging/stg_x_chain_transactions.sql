-- description: One row per X-Chain transaction of the configured addresses, every type.
-- unique: tx_hash
-- not_null: network, tx_type, chain_format, block_timestamp, tracked_addresses
-- accepted_values: chain_format = non-linear | linear
-- column: tx_hash: the transaction's id
-- column: network: mainnet or fuji
-- column: tx_type: the transaction type, as the API gives it (BaseTx, CreateAssetTx, OperationTx, ImportTx, ExportTx)
-- column: chain_format: non-linear (a DAG vertex, before Cortina) or linear (a block)
-- column: block_timestamp: when the transaction was accepted (its vertex or block time)
-- column: block_height: linear form: height of the block it is in
-- column: block_hash: linear form: id of the block it is in
-- column: vertices: non-linear form: the vertices it is in (hash, height, timestamp)
-- column: memo: the transaction's memo
-- column: source_chain: the chain an ImportTx imports from
-- column: destination_chain: the chain an ExportTx exports to
-- column: amounts_unlocked: per asset, the amount the transaction unlocked (smallest unit)
-- column: amounts_created: per asset, the amount the transaction created (smallest unit)
-- column: created_asset_id: of a CreateAssetTx: the new asset
-- column: created_asset_name: of a CreateAssetTx: the new asset's name
-- column: created_asset_symbol: of a CreateAssetTx: the new asset's symbol
-- column: created_asset_denomination: of a CreateAssetTx: the new asset's decimals
-- column: created_asset_type: of a CreateAssetTx: the new asset's output type
-- column: created_asset_cap: of a CreateAssetTx: whether the new asset is capped or variable, as the API gives it
-- column: consumed_utxos: the UTXOs it spent, as the API gives them
-- column: emitted_utxos: the UTXOs it created, as the API gives them
-- column: tracked_addresses: the configured addresses whose listing holds the transaction
-- column: extracted_at: when avalake read this version
with source as not materialized (
    select * from {{ lake('x_chain_transactions') }}
),

newest as (
    select * from {{ newest('source', 'txHash') }}
),

tracked as (
    select
        txHash,
        list(distinct address order by address) as tracked_addresses
    from source
    group by txHash
),

final as (
    select
        newest.txHash as tx_hash,
        network,
        txType as tx_type,
        chainFormat as chain_format,
        "timestamp" as block_timestamp,
        blockHeight as block_height,
        blockHash as block_hash,
        vertices,
        memo,
        sourceChain as source_chain,
        destinationChain as destination_chain,
        amountUnlocked as amounts_unlocked,
        amountCreated as amounts_created,
        assetCreated.assetId as created_asset_id,
        assetCreated.name as created_asset_name,
        assetCreated.symbol as created_asset_symbol,
        assetCreated.denomination as created_asset_denomination,
        assetCreated."type" as created_asset_type,
        assetCreated.cap as created_asset_cap,
        consumedUtxos as consumed_utxos,
        emittedUtxos as emitted_utxos,
        tracked.tracked_addresses,
        newest._extracted_at as extracted_at
    from newest
    inner join tracked
        on newest.txHash = tracked.txHash
)

select * from final
