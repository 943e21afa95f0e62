-- description: P-Chain balance of each configured address from the node's platform.getBalance, one row per address per snapshot.
-- unique: address, snapshot_at
-- incremental: true
-- not_null: network, balance_navax, unlocked_navax, locked_stakeable_navax, locked_not_stakeable_navax
-- column: address: the configured address, as the pipeline lists it
-- column: network: mainnet or fuji
-- column: balance_navax: the AVAX balance, in nAVAX
-- column: unlocked_navax: the unlocked AVAX, in nAVAX
-- column: locked_stakeable_navax: AVAX locked but stakeable, in nAVAX
-- column: locked_not_stakeable_navax: AVAX locked and not stakeable, in nAVAX
-- column: balances_by_asset: the balance per asset (assetId, amount)
-- column: unlocked_by_asset: the unlocked amount per asset (assetId, amount)
-- column: locked_stakeable_by_asset: the locked stakeable amount per asset (assetId, amount)
-- column: locked_not_stakeable_by_asset: the locked not stakeable amount per asset (assetId, amount)
-- column: utxo_ids: the UTXOs the balance is made of (txID, outputIndex)
-- column: snapshot_at: when avalake observed it (one time per run)
-- column: extracted_at: when avalake wrote the row
with source as not materialized (
    select * from {{ lake('p_chain_balances') }}
),

newest as (
    select * from {{ newest('source', 'address, _snapshot_at') }}
),

final as (
    select
        address,
        network,
        balance as balance_navax,
        unlocked as unlocked_navax,
        lockedStakeable as locked_stakeable_navax,
        lockedNotStakeable as locked_not_stakeable_navax,
        balances as balances_by_asset,
        unlockeds as unlocked_by_asset,
        lockedStakeables as locked_stakeable_by_asset,
        lockedNotStakeables as locked_not_stakeable_by_asset,
        utxoIDs as utxo_ids,
        _snapshot_at as snapshot_at,
        _extracted_at as extracted_at
    from newest
)

select * from final
